package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.JobFixtures;
import dev.privagg.job.SecureRoundState;
import dev.privagg.secagg.HararyGraph;
import dev.privagg.secagg.RosterPermutation;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.RoundThresholds;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.spec.JobSpec;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The neighbour graph a secure round's roster gets: {@link RoundThresholds}' sparse Harary graph on
 * the roster's own permutation, the complete graph for cohorts too small for one, and none below
 * the smallest roster the rates allow.
 */
class SecureUnmaskingTest {
  private final JobSpec spec =
      JobFixtures.spec(
          "noiseMultiplier: 0\nbudgetEpsilon: .inf",
          "minimumCohort: {count: 20.36, noiseStd: 0.05}",
          "aggregation: {mode: secure, maxDropoutRate: 0.3, adversarialClientRate: 0.1}");

  @Test
  void theThreatModel_isTheSpecsRates_againstASemiMaliciousServer() {
    assertThat(threat())
        .isEqualTo(new ThreatModel(0.1, 0.3, ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER));
  }

  private ThreatModel threat() {
    return SecureUnmasking.threatModel(spec);
  }

  @Test
  void rostersWithoutAGraph_getNone_andTheSmallestRosterIsAboveTheLast() {
    // 2t >= n + A + 1 and t <= n - (D + 1) - A: n = 2 needs t >= 2 and t <= 1; n = 4 (D = 1)
    // needs t >= 3 and t <= 2; n = 20 (A = 2, D = 6) needs t >= 12 and t <= 11.
    assertThat(RoundThresholds.smallestRoster(threat())).isEqualTo(21);
    for (int n : new int[] {0, 1, 2, 4, 10, 11, 20}) {
      assertThat(SecureUnmasking.graph(spec, roster(n))).as("n = %d", n).isNull();
    }
  }

  @Test
  void smallRosters_getTheCompleteGraph_inIndexOrder() {
    RoundGraph g = SecureUnmasking.graph(spec, roster(5));

    assertThat(g.graph().neighbourhoodSize()).isEqualTo(5);
    assertThat(g.graph().permutation()).isEqualTo(IntStream.range(0, 5).toArray());
    assertThat(g.threshold()).isEqualTo(3);
  }

  @Test
  void largerRosters_getTheSparseGraph_onTheRostersDerivedPermutation() {
    for (int n : new int[] {50, 200, 1000}) {
      SecureRoundState s = roster(n);
      RoundThresholds.Choice c = RoundThresholds.choose(n, threat()).orElseThrow();

      RoundGraph g = SecureUnmasking.graph(spec, s);

      assertThat(c.complete()).isFalse();
      assertThat(g.graph().neighbourhoodSize()).as("n = %d", n).isEqualTo(c.neighbourhoodSize());
      assertThat(g.threshold()).isEqualTo(c.threshold());
      assertThat(g.graph().permutation())
          .isEqualTo(
              RosterPermutation.of(SecureUnmasking.context(spec, s), SecureUnmasking.roster(s)));
      // What a Roster states rebuilds the same graph.
      HararyGraph stated =
          HararyGraph.ofNeighbourhoodSize(g.graph().neighbourhoodSize(), g.graph().permutation());
      for (int i = 0; i < n; i += Math.max(1, n / 10)) {
        assertThat(stated.neighbourhood(i)).isEqualTo(g.graph().neighbourhood(i));
      }
    }
  }

  @Test
  void theLargestRosterASecureSpecAllows_stillGetsASparseGraph() {
    int n = RoundThresholds.MAX_NUMBER_OF_CLIENTS;

    RoundThresholds.Choice c = RoundThresholds.choose(n, threat()).orElseThrow();

    assertThat(c.complete()).isFalse();
    // Rates at the edge (3 * 0.1 + 2 * 0.3 = 0.9) make neighbourhoods large (25,655), still sparse.
    assertThat(c.neighbourhoodSize()).isLessThan(n / 25);
  }

  /** A fixed roster of n clients with random advertised bytes. */
  private static SecureRoundState roster(int n) {
    Random random = new Random(n);
    SecureRoundState s = new SecureRoundState();
    s.round = 3;
    s.session = new byte[16];
    random.nextBytes(s.session);
    for (int i = 0; i < n; i++) {
      byte[] entry = new byte[96];
      random.nextBytes(entry);
      s.join("client-" + i, "shard", entry);
    }
    s.fixRoster();
    return s;
  }
}
