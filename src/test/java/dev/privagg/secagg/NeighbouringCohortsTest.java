package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Design.md invariant 12 for secure rounds: between neighbouring cohorts (one client u more or
 * less, whatever u does) whose other clients drop out no more than the declared rate allows, the
 * round unmasks in both worlds, so the release is "sum plus noise" in both. Real sessions; the
 * sizes are the graph's boundaries: the smallest roster, the complete graph's last sizes and the
 * sparse graph's first.
 */
class NeighbouringCohortsTest {
  private static final int D = 3;

  /**
   * Where a client stops: 1 after advertising, 2 after sharing, 3 after its receipt, 4 after its
   * masked input.
   */
  private static final int STAYS = 5;

  @Test
  void atTheGraphsBoundaries_bothWorldsUnmask_whateverPhaseTheExtraClientDropsIn() {
    // The smallest roster (5, complete), the first ring (6), the complete graph's return (10, 11).
    check(RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server"), 5, 6, 9, 10, 11, 20, 30);
    // Rates where the complete graph and rings alternate (25 and 27 complete, 26 and 28 rings) and
    // many sizes get none (up to 17 but 9 and 16, 20 to 22, 24): n and n + 1 both get one here.
    check(RoundGraph.threatModel(0.3, 0.1, "semi-malicious-server"), 18, 25, 26, 27);
    check(RoundGraph.threatModel(0.3, 0.1, "curious-server"), 5, 6, 7, 8, 9, 20);
  }

  private static void check(ThreatModel threat, int... sizes) {
    Random random = new Random(12);
    for (int n : sizes) {
      for (int trial = 0; trial < 3; trial++) {
        // The others: floor(rate * n) of them drop out, each in a random phase.
        int dropouts = (int) Math.floor((threat.estimatedDropoutRate() + 1e-14) * n);
        Map<Integer, Integer> stops = new HashMap<>();
        List<Integer> order = new ArrayList<>(IntStream.range(0, n).boxed().toList());
        java.util.Collections.shuffle(order, random);
        for (int i = 0; i < dropouts; i++) {
          stops.put(order.get(i), 1 + random.nextInt(STAYS - 1));
        }
        long seed = random.nextLong();
        assertThat(unmasks(threat, n, stops, seed))
            .as("without u: n = %d, stops %s", n, stops)
            .isTrue();
        for (int uStops = 1; uStops <= STAYS; uStops++) {
          Map<Integer, Integer> withU = new HashMap<>(stops);
          withU.put(n, uStops);
          assertThat(unmasks(threat, n + 1, withU, seed))
              .as("with u stopping after phase %d: n = %d, stops %s", uStops, n + 1, withU)
              .isTrue();
        }
      }
    }
  }

  /** Runs a round of n real sessions; true iff the job recovers exactly the survivors' sum. */
  private static boolean unmasks(
      ThreatModel threat, int n, Map<Integer, Integer> stops, long seed) {
    RoundThresholds.Choice c = RoundThresholds.choose(n, threat).orElseThrow();
    SecAggCohort cohort = new SecAggCohort(n, c.neighbourhoodSize(), c.threshold(), seed);
    long[][] units = new long[n][D];
    Random values = new Random(seed);
    for (long[] u : units) {
      for (int j = 0; j < D; j++) {
        u[j] = values.nextInt(1 << 16);
      }
    }
    cohort.shareKeys(i -> stops.getOrDefault(i, STAYS) >= 2);
    int[] shared = cohort.confirm(i -> stops.getOrDefault(i, STAYS) >= 3);
    int[] masked = cohort.maskedInputs(i -> stops.getOrDefault(i, STAYS) >= 4, units);
    var responses = cohort.unmask(i -> stops.getOrDefault(i, STAYS) >= 5, shared, masked);
    Unmasking.Result result = cohort.reconstruct(shared, masked, responses);
    if (result.correction().isEmpty()) {
      return false;
    }
    long[] sum = cohort.sumOfMaskedInputs(D);
    result.correction().get().applyTo(sum, 0, D);
    return java.util.Arrays.equals(sum, SecAggCohort.plainSum(units, masked, D));
  }
}
