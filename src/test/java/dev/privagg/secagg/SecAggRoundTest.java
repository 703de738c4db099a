package dev.privagg.secagg;

import static dev.privagg.secagg.SecAggCohort.allBut;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.secagg.UnmaskShares.RevealedShare;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;
import org.apache.commons.statistics.distribution.ChiSquaredDistribution;
import org.junit.jupiter.api.Test;

/** Whole rounds in pure Java: clients, the job's routing, and the job's unmasking. */
class SecAggRoundTest {
  private static final int D = 40;

  /**
   * Random cohorts (n in 10..30, Harary graphs of random odd degree, t just over half the degree)
   * with clients dropping at phases 2, 3 and 4. The expected outcome is computed independently: a
   * secret is recoverable when at least t of its neighbourhood answer in phase 4 (a client answers
   * when at least t of its own neighbourhood are in U3). When all are, the corrected sum is the
   * plain sum of U3's units, exactly, modulo 2^64.
   */
  @Test
  void roundsWithDropouts_unmaskToThePlainSum_orReportWhatCannotBeRecovered() {
    Random random = new Random(11);
    int complete = 0;
    for (int trial = 0; trial < 20; trial++) {
      int n = 10 + random.nextInt(21);
      int degree = 3 + 2 * random.nextInt((n - 1) / 2);
      int threshold = Math.min(degree, (degree + 1) / 2 + random.nextInt(2));
      SecAggCohort cohort = new SecAggCohort(n, degree, threshold, trial);
      long[][] units = randomUnits(n, random);
      boolean[] dropAt2 = flags(n, 0.05, random);
      boolean[] dropAt3 = flags(n, 0.1, random);
      boolean[] dropAt4 = flags(n, 0.05, random);

      int[] shared = cohort.shareKeys(i -> !dropAt2[i]);
      int[] masked = cohort.maskedInputs(i -> !dropAt3[i], units);
      Map<Integer, UnmaskShares> responses = cohort.unmask(i -> !dropAt4[i], shared, masked);
      Unmasking.Result result = cohort.reconstruct(shared, masked, responses);

      boolean[] inMasked = set(n, masked);
      IntPredicate answers =
          h -> inMasked[h] && !dropAt4[h] && count(cohort.neighbourhoods[h], inMasked) >= threshold;
      List<Integer> expectedSeeds = new ArrayList<>();
      List<Integer> expectedKeys = new ArrayList<>();
      for (int w : shared) {
        long holders = IntStream.of(cohort.neighbourhoods[w]).filter(answers).count();
        if (holders < threshold) {
          (inMasked[w] ? expectedSeeds : expectedKeys).add(w);
        }
      }
      assertThat(result.unrecoveredSelfMaskSeeds()).as("trial %d", trial).isEqualTo(expectedSeeds);
      assertThat(result.unrecoveredMaskKeys()).as("trial %d", trial).isEqualTo(expectedKeys);
      if (result.correction().isPresent()) {
        complete++;
        long[] sum = cohort.sumOfMaskedInputs(D);
        result.correction().get().applyTo(sum, 0, D);
        assertThat(sum).as("trial %d", trial).isEqualTo(SecAggCohort.plainSum(units, masked, D));
      }
    }
    assertThat(complete).as("rounds that completed").isGreaterThanOrEqualTo(12);
  }

  @Test
  void aDropoutAfterSharing_isCorrectedFromItsNeighboursShares_shardByShard() {
    SecAggCohort cohort = new SecAggCohort(15, 7, 4, 5);
    long[][] units = randomUnits(15, new Random(5));

    int[] shared = cohort.shareKeys(i -> true);
    int[] masked = cohort.maskedInputs(allBut(3, 9), units);
    Unmasking.Result result =
        cohort.reconstruct(shared, masked, cohort.unmask(i -> true, shared, masked));

    long[] sum = cohort.sumOfMaskedInputs(D);
    MaskCorrection correction = result.correction().orElseThrow();
    long[] firstShard = Arrays.copyOfRange(sum, 0, 17);
    long[] secondShard = Arrays.copyOfRange(sum, 17, D);
    correction.applyTo(firstShard, 0, 17);
    correction.applyTo(secondShard, 17, D);
    long[] expected = SecAggCohort.plainSum(units, masked, D);
    assertThat(firstShard).isEqualTo(Arrays.copyOfRange(expected, 0, 17));
    assertThat(secondShard).isEqualTo(Arrays.copyOfRange(expected, 17, D));
  }

  @Test
  void tooFewAnswersInPhase4_reportEveryTargetAsUnrecovered_withoutThrowing() {
    SecAggCohort cohort = new SecAggCohort(12, 5, 3, 8);
    int[] shared = cohort.shareKeys(i -> true);
    int[] masked = cohort.maskedInputs(allBut(0), randomUnits(12, new Random(8)));
    // Only two clients answer: fewer than t = 3 shares of anything.
    Map<Integer, UnmaskShares> responses = cohort.unmask(i -> i == 4 || i == 5, shared, masked);

    Unmasking.Result result = cohort.reconstruct(shared, masked, responses);

    assertThat(result.correction()).isEmpty();
    assertThat(result.unrecoveredSelfMaskSeeds())
        .containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    assertThat(result.unrecoveredMaskKeys()).containsExactly(0);
  }

  @Test
  void aClientLyingInPhase4_isOutvoted_whenEnoughOtherSharesAreTrue() {
    SecAggCohort cohort = new SecAggCohort(13, 9, 4, 21);
    long[][] units = randomUnits(13, new Random(21));
    int[] shared = cohort.shareKeys(i -> true);
    int[] masked = cohort.maskedInputs(allBut(6), units);
    Map<Integer, UnmaskShares> responses = cohort.unmask(i -> true, shared, masked);
    Random random = new Random(1);
    for (int liar : new int[] {2, 10}) {
      responses.put(liar, randomized(responses.get(liar), random));
    }

    Unmasking.Result result = cohort.reconstruct(shared, masked, responses);

    long[] sum = cohort.sumOfMaskedInputs(D);
    result.correction().orElseThrow().applyTo(sum, 0, D);
    assertThat(sum).isEqualTo(SecAggCohort.plainSum(units, masked, D));
  }

  @Test
  void liarsAtEveryTarget_loseOnlyFromTheFirstSecretWithFewerThanTTruthfulHolders() {
    // 40 clients, neighbourhoods of 13, threshold 7; a third of them lie about every share. Without
    // the commitments a search over t-subsets of the holders lost secrets whose shares held enough
    // truth (the review's phase-6 attack); checked against each dealer's Feldman commitments a lie
    // costs a secret what a silent holder would: a seed is lost iff fewer than t holders are
    // honest.
    int n = 40;
    int k = 13;
    int t = 7;
    SecAggCohort cohort = new SecAggCohort(n, k, t, 31);
    int[] shared = cohort.shareKeys(i -> true);
    int[] masked = cohort.maskedInputs(i -> true, randomUnits(n, new Random(31)));
    Map<Integer, UnmaskShares> responses = cohort.unmask(i -> true, shared, masked);
    Random random = new Random(4);
    java.util.Set<Integer> liars = new java.util.TreeSet<>();
    for (int liar = 0; liar < n; liar += 3) {
      responses.put(liar, randomized(responses.get(liar), random));
      liars.add(liar);
    }
    List<Integer> shortOfTruth = new ArrayList<>();
    for (int u = 0; u < n; u++) {
      if (IntStream.of(cohort.neighbourhoods[u]).filter(v -> !liars.contains(v)).count() < t) {
        shortOfTruth.add(u);
      }
    }

    Unmasking.Result result = cohort.reconstruct(shared, masked, responses);

    assertThat(shortOfTruth).as("this placement leaves some seeds short").isNotEmpty();
    // Every seed before the first short one is rebuilt; after it the round is lost, and later
    // seeds get their first try only.
    assertThat(result.unrecoveredSelfMaskSeeds())
        .containsAll(shortOfTruth)
        .first()
        .isEqualTo(shortOfTruth.get(0));
    assertThat(result.correction()).isEmpty();
    assertThat(result.provenLiars()).isNotEmpty().isSubsetOf(liars);
  }

  /**
   * Review 4's defence in depth: a share off the commitments the job reads proves a lie only where
   * t others on them give the advertised secret. With commitments it cannot read (here: none) a lie
   * costs the secret, and no holder, honest or not, is named.
   */
  @Test
  void sharesThatNoCommitmentsConfirm_getNobodyNamed() {
    int n = 9;
    SecAggCohort cohort = new SecAggCohort(n, 5, 3, 34);
    int[] shared = cohort.shareKeys(i -> true);
    int[] masked = cohort.maskedInputs(i -> true, randomUnits(n, new Random(34)));
    Map<Integer, UnmaskShares> responses = cohort.unmask(i -> true, shared, masked);
    responses.put(0, randomized(responses.get(0), new Random(5)));

    Unmasking.Result result =
        Unmasking.reconstruct(
            cohort.ctx,
            cohort.roster,
            cohort.neighbourhoods,
            3,
            shared,
            cohort.cuts,
            masked,
            dealer -> null,
            responses);

    assertThat(result.correction()).isEmpty();
    assertThat(result.provenLiars()).isEmpty();
    assertThat(cohort.reconstruct(shared, masked, responses).provenLiars())
        .as("with the dealers' commitments the liar, and only it, is named")
        .containsExactly(0);
  }

  /**
   * A survivor's roster mask key that is no point (the job admits none; a round restored from an
   * older version could hold one): its pairwise mask with a dropped neighbour cannot be derived, so
   * that neighbour's key counts as unrecovered and the round has no correction, and nothing throws
   * at the deadline.
   */
  @Test
  void aSurvivorsKeyThatIsNoPoint_leavesItsDroppedNeighbourUnrecovered_withoutThrowing() {
    int n = 9;
    SecAggCohort cohort = new SecAggCohort(n, 5, 3, 33);
    int[] shared = cohort.shareKeys(i -> true);
    int[] masked = cohort.maskedInputs(i -> i != 0, randomUnits(n, new Random(33)));
    Map<Integer, UnmaskShares> responses = cohort.unmask(i -> i != 0, shared, masked);
    int survivor =
        Arrays.stream(cohort.neighbourhoods[0]).filter(v -> v != 0).findFirst().getAsInt();
    List<AdvertisedKeys> roster = new ArrayList<>(cohort.roster);
    AdvertisedKeys keys = roster.get(survivor);
    byte[] noPoint = new byte[32];
    noPoint[0] = 2; // y = 2 is on no point of edwards25519
    roster.set(
        survivor,
        new AdvertisedKeys(
            keys.encryptionPublicKey(),
            noPoint,
            keys.selfMaskCommitment(),
            keys.signingPublicKey()));

    Unmasking.Result result =
        Unmasking.reconstruct(
            cohort.ctx,
            roster,
            cohort.neighbourhoods,
            3,
            shared,
            cohort.cuts,
            masked,
            cohort.commitments(),
            responses);

    assertThat(result.correction()).isEmpty();
    assertThat(result.unrecoveredMaskKeys()).containsExactly(0);
    assertThat(cohort.reconstruct(shared, masked, responses).correction())
        .as("the same round with the genuine roster unmasks")
        .isPresent();
  }

  @Test
  void aLiarFoundOutAtOneSecret_isNotTrustedAtTheNext_soFewLiarsCostLittle() {
    int n = 40;
    int k = 13;
    int t = 7;
    SecAggCohort cohort = new SecAggCohort(n, k, t, 32);
    long[][] units = randomUnits(n, new Random(32));
    int[] shared = cohort.shareKeys(i -> true);
    int[] masked = cohort.maskedInputs(i -> true, units);
    Map<Integer, UnmaskShares> responses = cohort.unmask(i -> true, shared, masked);
    Random random = new Random(5);
    for (int liar : new int[] {3, 17, 29}) {
      responses.put(liar, randomized(responses.get(liar), random));
    }

    Unmasking.Result result = cohort.reconstruct(shared, masked, responses);

    long[] sum = cohort.sumOfMaskedInputs(D);
    result.correction().orElseThrow().applyTo(sum, 0, D);
    assertThat(sum).isEqualTo(SecAggCohort.plainSum(units, masked, D));
  }

  @Test
  void aLargeRoster_isReconstructedInMemoryOfItsGraph_notOfItsSizeSquared() {
    // 10,000 clients on a sparse graph (neighbourhoods of 55): the graph is about 2 MB of ints;
    // the job unmasks at the round's deadline, in the decider, for rosters up to 1,000,000.
    int n = 10_000;
    HararyGraph graph = TestGraphs.shuffled(n, 54, new Random(6));
    int[][] neighbourhoods = new int[n][];
    List<AdvertisedKeys> roster = new ArrayList<>();
    Random random = new Random(7);
    for (int i = 0; i < n; i++) {
      neighbourhoods[i] = graph.neighbourhood(i);
      byte[] key = new byte[32];
      random.nextBytes(key);
      roster.add(new AdvertisedKeys(key, key, key, key));
    }
    int[] everyone = IntStream.range(0, n).toArray();
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long before = threads.getCurrentThreadAllocatedBytes();

    // Everyone shared and nobody answered: nothing is recovered, but the graph is checked.
    Unmasking.Result result =
        Unmasking.reconstruct(
            new RoundContext("job", 1, new byte[16]),
            roster,
            neighbourhoods,
            28,
            everyone,
            new int[0][],
            new int[0],
            dealer -> null,
            Map.of());

    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
    assertThat(result.unrecoveredMaskKeys()).hasSize(n);
    assertThat(allocated).as("bytes allocated to unmask a roster of %d", n).isLessThan(32L << 20);
  }

  /**
   * One client's masked input of a constant update (80,000 bytes), binned by byte value: uniform
   * bytes give a chi-square statistic with 255 degrees of freedom; the test fails above its 1 -
   * 1e-6 quantile, a false-failure probability of 1e-6 (the seed is fixed, so it passes or fails
   * always).
   */
  @Test
  void maskedInputBytes_lookUniform() {
    int d = 10_000;
    SecAggCohort cohort = new SecAggCohort(10, 5, 3, 17);
    long[][] units = new long[10][d];
    for (long[] row : units) {
      Arrays.fill(row, 1);
    }
    cohort.shareKeys(i -> true);
    cohort.maskedInputs(i -> true, units);
    byte[] bytes = cohort.maskedInputs.get(0);

    long[] counts = new long[256];
    for (byte b : bytes) {
      counts[b & 0xff]++;
    }
    double expected = bytes.length / 256.0;
    double chiSquare = 0;
    for (long count : counts) {
      chiSquare += (count - expected) * (count - expected) / expected;
    }
    assertThat(chiSquare)
        .isLessThan(ChiSquaredDistribution.of(255).inverseSurvivalProbability(1e-6));
  }

  private static UnmaskShares randomized(UnmaskShares honest, Random random) {
    return new UnmaskShares(
        randomized(honest.selfMaskShares(), random), randomized(honest.maskKeyShares(), random));
  }

  private static List<RevealedShare> randomized(List<RevealedShare> honest, Random random) {
    List<RevealedShare> lies = new ArrayList<>();
    for (RevealedShare share : honest) {
      byte[] value = new byte[Shamir.SHARE_BYTES];
      random.nextBytes(value);
      value[0] &= 0x01;
      lies.add(new RevealedShare(share.index(), value));
    }
    return lies;
  }

  private static long[][] randomUnits(int n, Random random) {
    long[][] units = new long[n][D];
    for (long[] row : units) {
      for (int j = 0; j < D; j++) {
        row[j] = random.nextLong(-(1L << 36), (1L << 36) + 1);
      }
    }
    return units;
  }

  private static boolean[] flags(int n, double probability, Random random) {
    boolean[] flags = new boolean[n];
    for (int i = 0; i < n; i++) {
      flags[i] = random.nextDouble() < probability;
    }
    return flags;
  }

  private static boolean[] set(int n, int[] members) {
    boolean[] in = new boolean[n];
    for (int i : members) {
      in[i] = true;
    }
    return in;
  }

  private static long count(int[] nodes, boolean[] in) {
    return IntStream.of(nodes).filter(i -> in[i]).count();
  }
}
