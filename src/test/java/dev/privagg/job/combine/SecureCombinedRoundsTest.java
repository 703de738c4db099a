package dev.privagg.job.combine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.job.CombinedRound;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.RoundSignal;
import dev.privagg.job.ShardRound;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.secagg.MaskCorrection;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The combiner of a secure job: the shards' partials are sums of masked inputs, the unmask blocks'
 * partials the mask correction of their coordinates ({@code unitsOffset}); added modulo 2^64 in any
 * order they give the survivors' sum exactly, which is bounded (folded around the 2^64 circle, then
 * scaled to rounds.maxClients * C) before the noise is added, so that one honest client moves the
 * release by at most C / m whatever the other inputs add up to.
 */
class SecureCombinedRoundsTest {
  private static final String EXACT = "noiseMultiplier: 0\nbudgetEpsilon: .inf";
  private static final String SECURE = "aggregation: {mode: secure}";
  private static final String GATE = "minimumCohort: {count: 4.36, noiseStd: 0.05}";
  private static final double UNIT = 0x1p-36; // clipNorm 1: one unit is 2^-36

  private final JobSpec secure = JobFixtures.spec(EXACT, GATE, SECURE);

  private final List<float[]> models = new ArrayList<>();
  private final CombinedRounds.Output out =
      new CombinedRounds.Output() {
        @Override
        public void release(RoundSignal sealed, CombinedRound sums, float[] model, long nanos) {
          models.add(model.clone());
        }

        @Override
        public void withhold(RoundSignal sealed, CombinedRound sums) {}
      };

  private static RoundSignal sealed(long contributions, String... shards) {
    RoundSignal s = new RoundSignal();
    s.kind = RoundSignal.Kind.SEALED;
    s.jobId = JobFixtures.JOB;
    s.round = 1;
    s.release = true;
    s.baseModelRound = 0;
    s.shards = shards;
    s.contributions = contributions;
    s.clipNorm = 1.0;
    return s;
  }

  private static RoundPartial shard(String key, long contributions, long... units) {
    ShardRound sums = new ShardRound();
    sums.units = units;
    sums.contributions = contributions;
    return new RoundPartial(JobFixtures.JOB, key, 1, sums);
  }

  private static long units(double value) {
    return (long) Math.scalb(value, 36);
  }

  /**
   * Two shards' sums of masked inputs and the correction that unmasks them: the survivors' units
   * are xA + xB, each shard's sum is masked with a random 64-bit mask that the correction removes.
   */
  private record Masked(RoundPartial a, RoundPartial b, MaskCorrection correction) {}

  private static Masked masked(long[] xA, long[] xB, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<MaskCorrection.Term> terms = new ArrayList<>();
    long[] maskA = new long[xA.length];
    long[] maskB = new long[xB.length];
    for (long[] mask : List.of(maskA, maskB)) {
      byte[] key = new byte[32];
      random.nextBytes(key);
      new dev.privagg.secagg.MaskStream(key).addTo(mask, 0, mask.length, 1);
      terms.add(new MaskCorrection.Term(key, -1));
    }
    long[] a = new long[xA.length];
    long[] b = new long[xB.length];
    for (int j = 0; j < a.length; j++) {
      a[j] = xA[j] + maskA[j];
      b[j] = xB[j] + maskB[j];
    }
    return new Masked(shard("shard-a", 2, a), shard("shard-b", 1, b), new MaskCorrection(terms));
  }

  private static byte[] encode(MaskCorrection correction) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (MaskCorrection.Term term : correction.terms()) {
      out.write(term.sign());
      out.writeBytes(term.key());
    }
    return out.toByteArray();
  }

  private static List<RoundPartial> blocks(MaskCorrection correction, int... cuts) {
    List<RoundPartial> blocks = new ArrayList<>();
    for (int b = 0; b + 1 < cuts.length; b++) {
      blocks.add(
          new UnmaskBlockFunction()
              .map(
                  new UnmaskRequest(
                      JobFixtures.JOB,
                      1,
                      "unmask-" + b,
                      cuts[b],
                      cuts[b + 1] - cuts[b],
                      encode(correction))));
    }
    return blocks;
  }

  private static String[] keys(List<RoundPartial> partials) {
    return partials.stream().map(p -> p.shardKey).toArray(String[]::new);
  }

  @Test
  void shardSumsAndUnmaskBlocks_addUpToTheSurvivorsSumExactly_inEveryArrivalOrder() {
    // Survivors' sum (0.75, -0.25, 0.5) on the grid; with m = 2 expected clients the model moves
    // by half of it.
    long[] xA = {units(0.25), units(-0.5), units(0.125)};
    long[] xB = {units(0.5), units(0.25), units(0.375)};
    Masked m = masked(xA, xB, 11);
    for (int[] cuts : List.of(new int[] {0, 3}, new int[] {0, 1, 3}, new int[] {0, 2, 2, 3})) {
      List<RoundPartial> blocks = blocks(m.correction(), cuts);
      List<RoundPartial> partials = new ArrayList<>(blocks);
      partials.add(m.a());
      partials.add(m.b());
      String[] shards = keys(partials);
      for (int order = 0; order < 4; order++) {
        CombinedRounds combiner =
            new CombinedRounds(secure, NoiseSources.forSpec(secure), LedgerFloor.NONE);
        MemoryCombinerStore store = new MemoryCombinerStore();
        List<RoundPartial> arrival = new ArrayList<>();
        for (RoundPartial p : partials) {
          arrival.add(copy(p)); // the combiner may keep an arriving array as its own
        }
        java.util.Collections.rotate(arrival, order);
        if (order % 2 == 1) {
          java.util.Collections.reverse(arrival);
        }
        boolean sealFirst = order < 2;
        if (sealFirst) {
          combiner.sealed(store, sealed(3, shards), out);
        }
        for (RoundPartial p : arrival) {
          combiner.partial(store, p, out);
        }
        if (!sealFirst) {
          assertThat(models).as("released before the seal").hasSize(0);
          combiner.sealed(store, sealed(3, shards), out);
        }

        assertThat(models)
            .as("cuts %s, order %d", java.util.Arrays.toString(cuts), order)
            .hasSize(1);
        assertThat(models.remove(0)).containsExactly(0.375f, -0.125f, 0.25f);
        assertThat(store.rounds.byRound).isEmpty();
      }
    }
  }

  @Test
  void aRoundIsNotReleased_untilEveryUnmaskBlockTheSealNamesIsIn() {
    Masked m = masked(new long[] {units(0.5), 0, 0}, new long[3], 12);
    List<RoundPartial> blocks = blocks(m.correction(), 0, 1, 3);
    List<RoundPartial> all = new ArrayList<>(blocks);
    all.add(m.a());
    all.add(m.b());
    CombinedRounds combiner =
        new CombinedRounds(secure, NoiseSources.forSpec(secure), LedgerFloor.NONE);
    MemoryCombinerStore store = new MemoryCombinerStore();

    combiner.sealed(store, sealed(3, keys(all)), out);
    combiner.partial(store, m.a(), out);
    combiner.partial(store, m.b(), out);
    combiner.partial(store, blocks.get(0), out);
    assertThat(models).isEmpty();
    combiner.partial(store, blocks.get(1), out);

    assertThat(models).singleElement().satisfies(x -> assertThat(x).containsExactly(0.25f, 0f, 0f));
  }

  private static RoundPartial copy(RoundPartial p) {
    RoundPartial c = new RoundPartial();
    c.jobId = p.jobId;
    c.shardKey = p.shardKey;
    c.round = p.round;
    c.units = p.units.clone();
    c.unitsOffset = p.unitsOffset;
    c.contributions = p.contributions;
    c.clipped = p.clipped;
    return c;
  }

  /** The secure spec with rounds.maxClients 2: the bound on a round's sum is 2 C. */
  private final JobSpec capped = JobFixtures.spec(EXACT, "maxClients: 2\n" + GATE, SECURE);

  @Test
  void anUnmaskedSumLongerThanMaxClientsTimesC_isScaledToThatNorm_whateverTheRoundsCount() {
    // One contribution whose sum is (1.5, 2, 0) C, norm 2.5 C: a client sent more than C.
    CombinedRounds combiner =
        new CombinedRounds(capped, NoiseSources.forSpec(capped), LedgerFloor.NONE);
    MemoryCombinerStore store = new MemoryCombinerStore();

    combiner.partial(store, shard("shard-a", 1, units(1.5), units(2), 0), out);
    combiner.sealed(store, sealed(1, "shard-a"), out);

    // Scaled to norm 2 C (rounds.maxClients, not the one contribution): (1.2, 1.6, 0); averaged
    // over m = 2.
    assertThat(models.get(0)[0]).isCloseTo(0.6f, within(1e-7f));
    assertThat(models.get(0)[1]).isCloseTo(0.8f, within(1e-7f));
    assertThat(models.get(0)[2]).isZero();
  }

  @Test
  void anUnmaskedSumThatWrappedPast2To63_isFoldedBackNearZero_notReleasedAsAHugeNegativeSum() {
    // A client's input put the first coordinate at 2^63 - 2^34 units; an honest 0.5 C carries it
    // past 2^63, where it wraps to -2^63 + 2^34. Both fold to about 0, not to +-2^27 C.
    long nearWrap = Long.MAX_VALUE - units(0.25) + 1;
    float[] before = release(capped, shard("shard-a", 1, nearWrap, 0, 0));
    float[] after = release(capped, shard("shard-a", 2, nearWrap + units(0.5), 0, 0));

    assertThat(before[0]).isCloseTo(0f, within(1e-6f));
    assertThat(after[0]).isCloseTo(0f, within(1e-6f));
  }

  @Test
  void anUnmaskedSumWithinTheBound_isReleasedExactly_andAPlaintextSumIsNeverRescaled() {
    CombinedRounds combiner =
        new CombinedRounds(secure, NoiseSources.forSpec(secure), LedgerFloor.NONE);
    MemoryCombinerStore store = new MemoryCombinerStore();
    // Two contributions, norm 1.25 C <= 2 C.
    combiner.partial(store, shard("shard-a", 2, units(0.75), units(-1), 0), out);
    combiner.sealed(store, sealed(2, "shard-a"), out);
    assertThat(models.remove(0)).containsExactly(0.375f, -0.5f, 0f);

    // A plaintext job's shards clip every update; the bound is secure aggregation's only.
    JobSpec plain = JobFixtures.exactSpec("");
    CombinedRounds plaintext =
        new CombinedRounds(plain, NoiseSources.forSpec(plain), LedgerFloor.NONE);
    MemoryCombinerStore plainStore = new MemoryCombinerStore();
    plaintext.partial(plainStore, shard("shard-a", 1, units(3), units(4), 0), out);
    plaintext.sealed(plainStore, sealed(1, "shard-a"), out);
    assertThat(models.remove(0)).containsExactly(1.5f, 2f, 0f);
  }

  @Test
  void theBound_isAppliedToTheSumBeforeTheNoiseIsAdded() {
    JobSpec noisy =
        JobFixtures.spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: .inf\nnoise: {source: seeded, seed: 7}",
            "maxClients: 2\n" + GATE,
            SECURE);
    // Same seeded noise in both: the over-long sum's model minus the empty sum's is the scaled
    // sum over m, exactly what scaling (to rounds.maxClients * C = 2 C) before the noise leaves.
    float[] withSum = release(noisy, shard("shard-a", 1, units(1.5), units(2), 0));
    float[] noiseOnly = release(noisy, shard("shard-a", 1, 0, 0, 0));

    assertThat(noiseOnly[0]).as("the noise is there").isNotZero();
    assertThat((double) withSum[0] - noiseOnly[0]).isCloseTo(0.6, within(1e-6));
    assertThat((double) withSum[1] - noiseOnly[1]).isCloseTo(0.8, within(1e-6));
    assertThat((double) withSum[2] - noiseOnly[2]).isCloseTo(0.0, within(1e-6));
  }

  private float[] release(JobSpec spec, RoundPartial partial) {
    CombinedRounds combiner =
        new CombinedRounds(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE);
    MemoryCombinerStore store = new MemoryCombinerStore();
    combiner.partial(store, partial, out);
    combiner.sealed(store, sealed(partial.contributions, partial.shardKey), out);
    return models.remove(models.size() - 1);
  }

  // Privacy: the release's sensitivity to one honest client, whatever the others send.

  private static double distance(float[] a, float[] b) {
    double s = 0;
    for (int j = 0; j < a.length; j++) {
      double d = (double) a[j] - b[j];
      s += d * d;
    }
    return Math.sqrt(s);
  }

  @Test
  void oneHonestClient_movesTheReleaseByAtMostCOverM_whateverTheOtherMaskedInputsAddUpTo() {
    // Neighbouring rounds: the same other masked inputs (unmasked, their sum S of c clients, some
    // of whom sent more than C), with and without one honest client's x, ||x|| <= C. The noise is
    // scaled to sensitivity C, so with m = 2 a release may move by at most C / 2.
    long nearWrap = Long.MAX_VALUE - units(0.25);
    long[][] others = {
      {units(3), 0, 0}, // longer than 2 C: the bound at contributions * C bound it
      {units(1.5), units(1.5), 0},
      {nearWrap, 0, 0}, // x's first coordinate carries the sum past 2^63, where it wraps
      {nearWrap, units(0.5), units(-0.5)},
    };
    long[][] honest = {
      {0, units(1), 0}, {units(0.5), 0, 0}, {units(0.6), units(-0.8), 0}, {units(-1), 0, 0},
    };
    for (long[] sum : others) {
      for (long[] x : honest) {
        long[] with = new long[3];
        for (int j = 0; j < 3; j++) {
          with[j] = sum[j] + x[j];
        }
        float[] without = release(secure, shard("shard-a", 2, sum.clone()));
        float[] withX = release(secure, shard("shard-a", 3, with));

        assertThat(distance(withX, without))
            .as(
                "others %s, honest %s",
                java.util.Arrays.toString(sum), java.util.Arrays.toString(x))
            .isLessThanOrEqualTo(0.5 + 1e-6);
      }
    }
  }
}
