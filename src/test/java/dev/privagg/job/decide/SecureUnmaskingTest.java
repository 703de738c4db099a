package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.RevealedShare;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.UnmaskShares;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.SecureRoundState;
import dev.privagg.secagg.HararyGraph;
import dev.privagg.secagg.RosterPermutation;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.RoundThresholds;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.spec.JobSpec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
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
          "minimumCohort: {count: 4.36, noiseStd: 0.05}",
          "aggregation: {mode: secure, maxDropoutRate: 0.15, adversarialClientRate: 0.1}");

  @Test
  void theThreatModel_isTheSpecsRates_againstASemiMaliciousServer() {
    assertThat(threat())
        .isEqualTo(new ThreatModel(0.1, 0.15, ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER));
  }

  private ThreatModel threat() {
    return SecureUnmasking.threatModel(spec);
  }

  @Test
  void rostersWithoutAGraph_getNone_andTheSmallestRosterIsAboveTheLast() {
    // 2t >= n + A + 1 and t <= n - (D + 1) - (A + 1): n = 3 needs t >= 2 and t <= 1; n = 4
    // needs t >= 3 and t <= 2.
    assertThat(RoundThresholds.smallestRoster(threat())).isEqualTo(5);
    for (int n : new int[] {0, 1, 2, 3, 4}) {
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
    ThreatModel edge = new ThreatModel(0.1, 0.3, ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER);

    RoundThresholds.Choice c = RoundThresholds.choose(n, edge).orElseThrow();

    assertThat(c.complete()).isFalse();
    // Rates at the edge (3 * 0.1 + 2 * 0.3 = 0.9) make neighbourhoods large (25,709), still sparse.
    assertThat(c.neighbourhoodSize()).isLessThan(n / 25);
  }

  /**
   * Unmask messages whose shares are not scalars mod l (66-byte shares of the field 2^521 - 1, as
   * clients of SecureMessage v3 sent) and a roster of X25519-style keys: the unmasking reports the
   * secrets it could not recover instead of throwing. (Rounds restored from before verifiable
   * secret sharing do not get here at all: SecurePhasesTest.)
   */
  @Test
  void sharesThatAreNoScalars_andKeysThatAreNoPoints_doNotUnmask_andDoNotThrow() {
    SecureRoundState s = roster(5);
    RoundGraph g = SecureUnmasking.graph(spec, s);
    s.degree = g.graph().neighbourhoodSize();
    s.threshold = g.threshold();
    s.permutation = g.graph().permutation();
    s.confirmed = new boolean[] {true, true, true, true, true};
    s.shareMessages = new byte[5][]; // no commitments either: only the first try can recover
    s.maskedInput = new boolean[] {true, true, true, true, false};
    s.unmaskMessages = new byte[5][];
    Random random = new Random(9);
    for (int holder = 0; holder < 4; holder++) {
      List<RevealedShare> seeds = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        byte[] share = new byte[66]; // a share of v3, in the field of 2^521 - 1
        random.nextBytes(share);
        share[0] &= 1;
        seeds.add(new RevealedShare(w, ByteBuffer.wrap(share)));
      }
      byte[] key = new byte[66];
      random.nextBytes(key);
      key[0] &= 1;
      List<RevealedShare> keys = List.of(new RevealedShare(4, ByteBuffer.wrap(key)));
      s.unmaskMessages[holder] =
          AvroCodec.encode(
              new SecureMessage(
                  "job",
                  3L,
                  ByteBuffer.wrap(s.session),
                  "client-" + holder,
                  new UnmaskShares(seeds, keys)));
    }

    SecureUnmasking.Outcome outcome = SecureUnmasking.corrections(spec, s);

    assertThat(outcome.terms()).isNull();
    assertThat(outcome.problem())
        .startsWith("too few consistent shares")
        .contains("self-mask seeds of roster indices [0, 1, 2, 3]")
        .contains("mask keys of [4]");
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
