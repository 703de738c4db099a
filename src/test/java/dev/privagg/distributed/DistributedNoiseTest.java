package dev.privagg.distributed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.secagg.RandomizedHadamard;
import dev.privagg.secagg.WordPacking;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The client's grid, the rotation, the word packing and the plan of the distributed noise. */
class DistributedNoiseTest {

  @Test
  void theRotationKeepsNormsAndInvertsExactlyUpToRounding() {
    RandomizedHadamard rotation = new RandomizedHadamard("ddg-job", 3, 1000);
    assertThat(rotation.paddedDimension()).isEqualTo(1024);
    SplittableRandom random = new SplittableRandom(1);
    double[] x = new double[1000];
    for (int j = 0; j < x.length; j++) {
      x[j] = random.nextGaussian();
    }
    double[] y = rotation.rotate(x);
    assertThat(norm(y)).isCloseTo(norm(x), within(1e-9));
    rotation.invert(y);
    for (int j = 0; j < 1024; j++) {
      assertThat(y[j]).isCloseTo(j < 1000 ? x[j] : 0, within(1e-12));
    }
    // A spike is spread evenly: every coordinate gets 1 / sqrt(p) of it.
    double[] spike = new double[1000];
    spike[17] = 1;
    for (double v : rotation.rotate(spike)) {
      assertThat(Math.abs(v)).isCloseTo(1 / 32.0, within(1e-15));
    }
  }

  @Test
  void theSignsComeFromTheRoundContext() {
    double[] spike = {1, 0, 0, 0, 0, 0, 0, 0};
    double[] a = new RandomizedHadamard("ddg-job", 3, 8).rotate(spike);
    double[] b = new RandomizedHadamard("ddg-job", 4, 8).rotate(spike);
    double[] again = new RandomizedHadamard("ddg-job", 3, 8).rotate(spike);
    assertThat(again).containsExactly(a);
    double[] ones = new double[8];
    java.util.Arrays.fill(ones, 1);
    assertThat(new RandomizedHadamard("ddg-job", 3, 8).rotate(ones))
        .isNotEqualTo(new RandomizedHadamard("ddg-job", 4, 8).rotate(ones));
    assertThat(b).hasSize(8);
    assertThat(RandomizedHadamard.paddedDimension(1)).isEqualTo(1);
    assertThat(RandomizedHadamard.paddedDimension(1024)).isEqualTo(1024);
    assertThat(RandomizedHadamard.paddedDimension(1025)).isEqualTo(2048);
  }

  @ParameterizedTest(name = "{0} bits")
  @CsvSource({"8", "12", "16", "17", "20", "31", "32", "64"})
  void packedWordsAddBackTheirLowBits(int bits) {
    SplittableRandom random = new SplittableRandom(bits);
    long[] words = new long[37];
    for (int j = 0; j < words.length; j++) {
      words[j] = random.nextLong();
    }
    byte[] packed = WordPacking.pack(words, bits);
    assertThat(packed).hasSize((37 * bits + 7) / 8);
    long[] sum = new long[37];
    sum[5] = 3;
    WordPacking.addTo(sum, packed, bits);
    long mask = bits == 64 ? -1L : (1L << bits) - 1;
    for (int j = 0; j < words.length; j++) {
      assertThat(sum[j]).isEqualTo((words[j] & mask) + (j == 5 ? 3 : 0));
    }
  }

  @Test
  void packingRefusesWrongLengthsAndDirtyPadding() {
    byte[] packed = WordPacking.pack(new long[] {1, 2, 3}, 12); // 36 bits: 4 spare
    assertThatThrownBy(() -> WordPacking.addTo(new long[4], packed, 12))
        .hasMessageContaining("expected 6");
    packed[4] |= (byte) 0x80;
    long[] target = new long[3];
    assertThatThrownBy(() -> WordPacking.addTo(target, packed, 12))
        .hasMessageContaining("padding bits must be zero");
    assertThat(target).containsOnly(0L);
  }

  @Test
  void theValidatorsCheckNamesWrongLengthsAndDirtyPaddingWithoutConsumingTheBuffer() {
    byte[] packed = WordPacking.pack(new long[] {1, 2, 3}, 12);
    java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(packed);
    assertThat(WordPacking.problem(buffer, 3, 12)).isNull();
    assertThat(buffer.remaining()).isEqualTo(5);
    assertThat(WordPacking.problem(buffer, 4, 12))
        .isEqualTo("masked input has 5 bytes, expected 6 (4 words of 12 bits)");
    packed[4] |= (byte) 0x10;
    assertThat(WordPacking.problem(java.nio.ByteBuffer.wrap(packed), 3, 12))
        .contains("padding bits");
    // Whole bytes have no padding to check.
    assertThat(WordPacking.problem(java.nio.ByteBuffer.wrap(new byte[6]), 3, 16)).isNull();
  }

  @ParameterizedTest(name = "z {0}, d {1}, {2} bits, n {3} of at most {4}")
  @CsvSource({
    "1.0, 650, 16, 40, 100",
    "1.0, 650, 18, 40, 100",
    "0.7, 100000, 16, 80, 200",
    "2.0, 1000000, 20, 500, 1000",
    "1.0, 10, 12, 2, 10",
    // sigma at KLS21's floor of 1/2, where tau is large and the share must be raised
    "0.01, 10, 12, 2, 10"
  })
  void thePlanChargesAtLeastTheAskedNoiseAndStaysWithinTheWrapTarget(
      double z, int d, int bits, int n, long max) {
    DistributedNoisePlan plan = DistributedNoisePlan.plan(z, d, bits, n, max);
    assertThat(plan.noiseMultiplier()).isGreaterThanOrEqualTo(z);
    assertThat(plan.wrapProbability()).isLessThanOrEqualTo(DistributedNoisePlan.WRAP_TARGET);
    double sigma2 = (double) plan.varianceNumerator() / plan.varianceDenominator();
    assertThat(n * sigma2).isGreaterThanOrEqualTo(z * z * plan.maxSquaredNorm());
    assertThat(plan.maxSquaredNorm())
        .isGreaterThanOrEqualTo(
            (long) Math.floor(plan.unitsPerClipNorm() * plan.unitsPerClipNorm()));
    // The stated wrap bound, recomputed: 4 p exp(-R^2 / (2 (s1 + s2)^2)).
    double room = Math.scalb(1.0, bits - 1) - 1 - max;
    double s1 = max * plan.unitsPerClipNorm() / Math.sqrt(plan.paddedDimension());
    double s2 = Math.sqrt(max * sigma2);
    assertThat(plan.wrapProbability())
        .isCloseTo(
            4.0 * plan.paddedDimension() * Math.exp(-room * room / (2 * (s1 + s2) * (s1 + s2))),
            org.assertj.core.data.Percentage.withPercentage(1e-9));
    // A grid 1% finer would break the wrap target: the plan is the finest that fits.
    DistributedNoisePlan finer =
        DistributedNoisePlan.at(plan.unitsPerClipNorm() * 1.01, z, d, bits, n, max);
    assertThat(finer.wrapProbability()).isGreaterThan(DistributedNoisePlan.WRAP_TARGET);
  }

  @Test
  void aWordAtHalfTheModulusIsTheMostNegativeResidue() {
    DistributedNoisePlan plan = DistributedNoisePlan.plan(1, 16, 12, 2, 10);
    GridEncoder encoder = new GridEncoder(plan, "ddg-job", 3);
    long[] sum = new long[plan.paddedDimension()];
    java.util.Arrays.fill(sum, 1L << 11); // 2^(bits - 1): -2^11, not +2^11
    double[] y = new double[plan.paddedDimension()];
    java.util.Arrays.fill(y, -2048);
    new RandomizedHadamard("ddg-job", 3, 16).invert(y);
    double[] decoded = encoder.decode(sum, 1.0);
    for (int j = 0; j < 16; j++) {
      assertThat(decoded[j]).isCloseTo(y[j] / plan.unitsPerClipNorm(), within(1e-9));
    }
  }

  @Test
  void release_topsTheSendersSharesUpToMaxInputs_whoeverSent() {
    // z 1, d 1024, 18 bits, n_min 3, maxClients 12: the release holds 12 shares however many sent.
    DistributedNoisePlan plan = DistributedNoisePlan.plan(1, 1024, 18, 3, 12);
    GridEncoder encoder = new GridEncoder(plan, "ddg-job", 4);
    long[] zero = new long[plan.paddedDimension()];
    double unit = 1 / plan.unitsPerClipNorm();
    SplittableRandom random = new SplittableRandom(41);
    for (int sent : new int[] {2, 7}) {
      // Zero words: the release is the job's 12 - sent shares alone, rotated back. 20 releases
      // of 1024 coordinates estimate their variance to about 1% (sd); 6% is about 6 sds, a
      // false failure below 1e-8.
      double squares = 0;
      int n = 0;
      for (int rep = 0; rep < 20; rep++) {
        for (double v : encoder.release(zero, sent, 1.0, random)) {
          squares += (v / unit) * (v / unit);
          n++;
        }
      }
      assertThat(squares / n)
          .as("variance of the job's shares with %d senders", sent)
          .isCloseTo(
              (12 - sent) * plan.share().sigmaSquared(),
              org.assertj.core.data.Percentage.withPercentage(6));
    }
    // The job's shares join the words before the wrap, as a client's would: a sum at the edge of
    // the residue range (a malicious input can put it there) wraps the same whoever brought the
    // shares, so the release cannot tell a missing client by where its values fall.
    long[] edge = new long[plan.paddedDimension()];
    java.util.Arrays.fill(edge, (1L << 17) - 1);
    long[] withShares = edge.clone();
    SplittableRandom drawn = new SplittableRandom(77);
    for (int k = 0; k < 3; k++) {
      for (int j = 0; j < withShares.length; j++) {
        withShares[j] += plan.share().sample(drawn);
      }
    }
    assertThat(encoder.release(edge, 9, 1.0, new SplittableRandom(77)))
        .containsExactly(encoder.decode(withShares, 1.0));
    // A full round (or one past maxClients) gets nothing from the job: release is decode.
    long[] words = new long[plan.paddedDimension()];
    for (int j = 0; j < words.length; j++) {
      words[j] = random.nextLong();
    }
    assertThat(encoder.release(words, 12, 1.0, random)).containsExactly(encoder.decode(words, 1.0));
    assertThat(encoder.release(words, 13, 1.0, random)).containsExactly(encoder.decode(words, 1.0));
  }

  @Test
  void wideWords_planTheFinestGridTheSamplerReaches() {
    // At 28 to 32 bits the wrap bound would allow grids whose shares exceed the sampler's 2^40:
    // those grids are too fine, not a refusal of the spec.
    for (int bits : new int[] {27, 28, 32}) {
      DistributedNoisePlan plan = DistributedNoisePlan.plan(1, 650, bits, 66, 200);
      assertThat(plan.bits()).isEqualTo(bits);
      assertThat(plan.share().sigmaSquared()).isLessThanOrEqualTo(0x1p40);
      assertThat(plan.noiseMultiplier()).isGreaterThanOrEqualTo(1 - 1e-12);
    }
    assertThatThrownBy(() -> DistributedNoisePlan.plan(1e7, 650, 18, 66, 200))
        .hasMessageContaining("lower privacy.noiseMultiplier");
  }

  @Test
  void moreBitsGiveAFinerGrid() {
    double c16 = DistributedNoisePlan.plan(1, 650, 16, 40, 100).unitsPerClipNorm();
    double c18 = DistributedNoisePlan.plan(1, 650, 18, 40, 100).unitsPerClipNorm();
    assertThat(c18).isGreaterThan(3.9 * c16);
  }

  @Test
  void refusesWordsTooSmallForTheCap() {
    assertThatThrownBy(() -> DistributedNoisePlan.plan(1, 650, 8, 40, 200))
        .hasMessageContaining("raise aggregation.bitsPerCoordinate or lower rounds.maxClients");
    assertThatThrownBy(() -> DistributedNoisePlan.plan(1, 650, 40, 40, 200))
        .hasMessageContaining("aggregation.bitsPerCoordinate must be in [8, 32]");
    assertThatThrownBy(() -> DistributedNoisePlan.plan(1, 650, 16, 201, 200))
        .hasMessageContaining("at most rounds.maxClients");
  }

  @Test
  void roundingKeepsTheSquaredNormBoundExactlyEvenForVectorsAtTheClipNorm() {
    DistributedNoisePlan plan = DistributedNoisePlan.plan(1, 300, 16, 20, 50);
    GridEncoder encoder = new GridEncoder(plan, "ddg-job", 3);
    SplittableRandom random = new SplittableRandom(3);
    for (int trial = 0; trial < 300; trial++) {
      double[] x = new double[300];
      for (int j = 0; j < x.length; j++) {
        x[j] = trial % 3 == 0 ? (j < 5 ? 1 : 0) : random.nextGaussian();
      }
      long[] units = encoder.round(x, 0.5, random);
      long squares = 0;
      for (long u : units) {
        squares += u * u;
      }
      assertThat(squares).isLessThanOrEqualTo(plan.maxSquaredNorm());
    }
  }

  @Test
  void theDecodedSumOfRoundedInputsIsTheSumOfTheClippedInputsToTheGridsPrecision() {
    DistributedNoisePlan plan = DistributedNoisePlan.plan(1, 200, 18, 20, 50);
    GridEncoder encoder = new GridEncoder(plan, "ddg-job", 3);
    SplittableRandom random = new SplittableRandom(4);
    double clip = 2.0;
    double[] truth = new double[200];
    long[] sum = new long[plan.paddedDimension()];
    for (int client = 0; client < 30; client++) {
      double[] x = new double[200];
      for (int j = 0; j < x.length; j++) {
        x[j] = random.nextGaussian() * (client % 2 == 0 ? 0.01 : 1); // half are clipped
      }
      double scale = Math.min(1, clip / norm(x));
      for (int j = 0; j < x.length; j++) {
        truth[j] += x[j] * scale;
      }
      long[] units = encoder.round(x, clip, random);
      for (int j = 0; j < sum.length; j++) {
        sum[j] += units[j] & plan.wordMask();
      }
    }
    double[] decoded = encoder.decode(sum, clip);
    // Rounding moves each of 30 inputs by below one unit per coordinate: the error's norm is at
    // most 30 sqrt(p) units, in model units 30 sqrt(p) C / c.
    double bound = 30 * Math.sqrt(plan.paddedDimension()) * clip / plan.unitsPerClipNorm();
    double[] error = new double[200];
    for (int j = 0; j < 200; j++) {
      error[j] = decoded[j] - truth[j];
    }
    assertThat(norm(error)).isLessThan(bound).isGreaterThan(0);
  }

  @Test
  void noisySumsDecodeWithTheirNoiseAndWithoutWrapping() {
    DistributedNoisePlan plan = DistributedNoisePlan.plan(1, 64, 16, 10, 20);
    GridEncoder encoder = new GridEncoder(plan, "ddg-job", 3);
    SplittableRandom random = new SplittableRandom(5);
    double[] truth = new double[64];
    long[] sum = new long[plan.paddedDimension()];
    for (int client = 0; client < 20; client++) {
      double[] x = new double[64];
      java.util.Arrays.fill(x, 1.0 / 8); // norm 1, every client aligned: the signal's worst case
      for (int j = 0; j < 64; j++) {
        truth[j] += x[j];
      }
      long[] words = encoder.encode(x, 1, random);
      for (int j = 0; j < sum.length; j++) {
        sum[j] += words[j];
      }
    }
    double[] decoded = encoder.decode(sum, 1);
    // 20 shares of sigma^2 each: per coordinate std sqrt(20 sigma^2) units; 6 stds fails by chance
    // with probability about 64 * 2e-9.
    double std =
        Math.sqrt(20.0 * plan.varianceNumerator() / plan.varianceDenominator())
            / plan.unitsPerClipNorm();
    for (int j = 0; j < 64; j++) {
      assertThat(decoded[j]).isCloseTo(truth[j], within(6 * std + 20 / plan.unitsPerClipNorm()));
    }
  }

  private static double norm(double[] v) {
    double s = 0;
    for (double x : v) {
      s += x * x;
    }
    return Math.sqrt(s);
  }
}
