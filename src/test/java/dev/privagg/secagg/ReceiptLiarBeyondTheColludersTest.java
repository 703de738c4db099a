package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The declared colluders and one client more (the client two neighbouring worlds differ by) all
 * send receipts that reject every honest neighbour. Before r counted that client (issue 32's final
 * review), their A + 1 rejections pushed honest dealers over r = A: the job removed and named them,
 * the cascade removed the rest, and one client's presence moved the gate's masked-input count by
 * the whole cohort. Now no honest client leaves, and the sum holds every honest input.
 */
class ReceiptLiarBeyondTheColludersTest {
  private static final ThreatModel DEFAULTS =
      RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server");
  private static final int D = 4;

  @Test
  void colludersNextToOneLiar_removeNoHonestClient_andEveryHonestInputIsUnmasked() {
    int n = 39; // 38 + the liar: A = 3 in both worlds
    int a = RoundThresholds.colluders(n, DEFAULTS);
    SecAggCohort c = cohort(n, 11);
    int liar = n - 1;
    int q = 0;
    while (c.permutation[q] != liar) {
      q++;
    }
    Set<Integer> bad = new HashSet<>(Set.of(liar));
    for (int step = 1; bad.size() < a + 1; step++) {
      bad.add(c.permutation[(q + step) % n]);
      if (bad.size() < a + 1) {
        bad.add(c.permutation[(q - step + n) % n]);
      }
    }
    c.shareKeys(i -> true);
    ShareConfirmation.Result result = confirm(c, bad::contains);
    assertThat(result.removed().keySet()).allMatch(bad::contains);
    int[] honest = IntStream.range(0, n).filter(i -> !bad.contains(i)).toArray();
    assertThat(result.confirmed()).contains(honest);
    assertThat(unmaskedExactly(c, units(n))).isGreaterThanOrEqualTo(honest.length);
  }

  @Test
  void oneLiarWhereNoColluderIsDeclared_removesNoHonestClient() {
    int n = 9; // A = 0 at the default rates
    assertThat(RoundThresholds.colluders(n, DEFAULTS)).isZero();
    SecAggCohort c = cohort(n, 5);
    c.shareKeys(i -> true);
    ShareConfirmation.Result result = confirm(c, i -> i == n - 1);
    assertThat(result.removed().keySet()).allMatch(i -> i == n - 1);
    assertThat(unmaskedExactly(c, units(n))).isGreaterThanOrEqualTo(n - 1);
  }

  @Test
  void colludersAndOneLiarAtRandomRingPlaces_neverRemoveAnHonestClient() {
    for (int n : new int[] {39, 99, 300}) {
      RoundThresholds.Choice g = RoundThresholds.choose(n, DEFAULTS).orElseThrow();
      int a = RoundThresholds.colluders(n, DEFAULTS);
      Random random = new Random(42);
      for (int trial = 0; trial < 500; trial++) {
        HararyGraph graph =
            HararyGraph.ofNeighbourhoodSize(g.neighbourhoodSize(), shuffled(n, random));
        // Indices 0 .. a - 1 collude, index a is the liar; the ring places them at random.
        boolean[] shared = new boolean[n];
        int[][] receipts = new int[n][];
        for (int i = 0; i < n; i++) {
          shared[i] = true;
          int self = i;
          receipts[i] =
              i <= a
                  ? IntStream.of(graph.neighbourhood(i)).filter(v -> v != self && v > a).toArray()
                  : new int[0];
        }
        ShareConfirmation.Result result =
            ShareConfirmation.decide(
                n, graph::neighbourhood, shared, receipts, g.threshold(), g.rejectionLimit());
        assertThat(result.removed().keySet())
            .as("n = %d, trial %d: removed", n, trial)
            .allMatch(i -> i <= a);
      }
    }
  }

  private static SecAggCohort cohort(int n, long seed) {
    SecAggCohort c = SecAggCohort.checked(n, DEFAULTS, seed);
    c.rejectionLimit = RoundThresholds.choose(n, DEFAULTS).orElseThrow().rejectionLimit();
    return c;
  }

  private static int[] shuffled(int n, Random random) {
    int[] perm = IntStream.range(0, n).toArray();
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int x = perm[i];
      perm[i] = perm[j];
      perm[j] = x;
    }
    return perm;
  }

  private static long[][] units(int n) {
    Random random = new Random(1);
    long[][] units = new long[n][D];
    for (long[] u : units) {
      for (int j = 0; j < D; j++) {
        u[j] = random.nextInt(1 << 20);
      }
    }
    return units;
  }

  /** Real sessions through the receipt phase; {@code liars} reject every other neighbour. */
  private static ShareConfirmation.Result confirm(SecAggCohort c, IntPredicate liars) {
    c.confirm(
        i -> true,
        i ->
            liars.test(i)
                ? IntStream.of(c.neighbourhoods[i]).filter(v -> v != i && !liars.test(v)).toArray()
                : null);
    for (int i = 0; i < c.n; i++) {
      if (!liars.test(i)) {
        assertThat(c.clients.get(i).rejectedSenders()).as("honest receipt of %d", i).isEmpty();
      }
    }
    return c.confirmation;
  }

  /** The rest of the round; the masked inputs whose sum unmasked exactly, or -1. */
  private static int unmaskedExactly(SecAggCohort c, long[][] units) {
    return c.unmaskedExactly(units, i -> true, D);
  }
}
