package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.JobFixtures;
import dev.privagg.secagg.GraphParameters;
import dev.privagg.secagg.HararyGraph;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.spec.JobSpec;
import java.security.SecureRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The neighbour graph a secure round's roster gets: FCP's sparse Harary graph where its parameter
 * finder finds one, the complete graph at the smallest threshold FCP's full-graph rules allow for
 * cohorts too small for one, and none for fewer than two clients.
 */
class SecureUnmaskingTest {
  private final JobSpec spec =
      JobFixtures.spec(
          "noiseMultiplier: 0\nbudgetEpsilon: .inf",
          "",
          "aggregation: {mode: secure, maxDropoutRate: 0.3, adversarialClientRate: 0.1}");
  private final SecureRandom random = new SecureRandom();

  @Test
  void theThreatModel_isTheSpecsRates_againstASemiMaliciousServer() {
    assertThat(threat())
        .isEqualTo(new ThreatModel(0.1, 0.3, ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER));
  }

  private ThreatModel threat() {
    return SecureUnmasking.threatModel(spec);
  }

  @Test
  void fewerThanThreeClients_getNoGraph_sinceNoThresholdOutvotesHalfOfThem() {
    // A threshold above ceil((n + 0.1 n) / 2) within n: impossible for n <= 2.
    assertThat(SecureUnmasking.graph(spec, 0, random)).isNull();
    assertThat(SecureUnmasking.graph(spec, 1, random)).isNull();
    assertThat(SecureUnmasking.graph(spec, 2, random)).isNull();
  }

  @Test
  void cohortsTooSmallForASparseGraph_getTheCompleteGraph_atTheSmallestAllowedThreshold() {
    // Above ceil((n + 0.1 n) / 2) and at least ceil((1 - 0.3) n): 3 of 3.
    for (int n : new int[] {3}) {
      RoundGraph g = SecureUnmasking.graph(spec, n, random);

      assertThat(g.graph().neighbourhoodSize()).as("n = %d", n).isEqualTo(n);
      assertThat(g.graph().permutation()).isEqualTo(IntStream.range(0, n).toArray());
      assertThat(g.threshold()).isEqualTo(n);
    }
  }

  @Test
  void largerCohorts_getFcpsHararyGraph_withItsDegreeAndThreshold_onAShuffledRing() {
    ThreatModel threat = threat();
    for (int n : new int[] {50, 200, 1000}) {
      GraphParameters p = GraphParameters.find(n, threat);

      RoundGraph g = SecureUnmasking.graph(spec, n, random);

      assertThat(g.graph().neighbourhoodSize()).as("n = %d", n).isEqualTo(p.degree() + 1);
      assertThat(g.graph().neighbourhoodSize() % 2).isOne();
      assertThat(g.threshold()).isEqualTo(p.threshold());
      assertThat(g.graph().permutation())
          .containsExactlyInAnyOrder(IntStream.range(0, n).boxed().toArray(Integer[]::new));
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
    int n = GraphParameters.MAX_NUMBER_OF_CLIENTS;

    RoundGraph g = SecureUnmasking.graph(spec, n, random);

    assertThat(g.graph().neighbourhoodSize())
        .isEqualTo(GraphParameters.find(n, threat()).degree() + 1)
        .isLessThan(n / 100);
  }
}
