package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.apache.commons.statistics.inference.ChiSquareTest;
import org.apache.commons.statistics.inference.KolmogorovSmirnovTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Statistical tests use fixed seeds, so they are deterministic. The stated false-failure rates are
 * for a seed drawn at random: the mean check (|mean| < 5 standard errors) fails with probability
 * 6e-7, the variance check (5 standard errors) about 1e-6, and the KS check (p > 1e-4) with
 * probability 1e-4, and the binned chi-square check (p > 1e-4) with probability 1e-4.
 */
class NoiseSourceTest {
  private static final int N = 200_000;
  private static final byte[] KEY =
      HexFormat.of().parseHex("3f9c1d2e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d");

  @Test
  void chacha20Block_matchesRfc8439TestVector() {
    // RFC 8439, Section 2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1.
    int[] state = {
      0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
      0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c,
      0x13121110, 0x17161514, 0x1b1a1918, 0x1f1e1d1c,
      0x00000001, 0x09000000, 0x4a000000, 0x00000000
    };
    int[] out = new int[16];
    ChaCha.block(state, out, ChaCha.RFC8439_ROUNDS);
    assertThat(out)
        .containsExactly(
            0xe4e7f110,
            0x15593bd1,
            0x1fdd0f50,
            0xc47120a3,
            0xc7f4d1c7,
            0x0368c033,
            0x9aaa2204,
            0x4e6cd4c3,
            0x466482d2,
            0x09aa9f07,
            0x05d7c214,
            0xa2028bd9,
            0xd19c12b5,
            0xb94e16de,
            0xe883d0cb,
            0x4e3c50a2);
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 42, 20261122})
  void seededSource_isStandardNormal(long seed) {
    double[] x = sample(NoiseSource.seeded(seed).forRound("job", 1));
    assertStandardNormal(x);
  }

  @Test
  void seededSource_binFrequenciesMatchTheNormal_includingTails() {
    // 1M samples in 0.25-wide bins over [-5, 5] plus two tail bins: catches a wrong ziggurat
    // layer, wedge or tail that moments and KS can miss. Chi-square p > 1e-4.
    int n = 1_000_000;
    int bins = 42;
    long[] observed = new long[bins];
    NoiseStream stream = NoiseSource.seeded(99).forRound("job", 3);
    for (int i = 0; i < n; i++) {
      double x = stream.nextStandardNormal();
      int bin = x < -5 ? 0 : x >= 5 ? bins - 1 : 1 + (int) ((x + 5) / 0.25);
      observed[bin]++;
    }
    double[] expected = new double[bins];
    expected[0] = LogMath.normalCdf(-5);
    expected[bins - 1] = LogMath.normalCdf(-5);
    for (int b = 1; b < bins - 1; b++) {
      double lo = -5 + (b - 1) * 0.25;
      expected[b] = LogMath.normalCdf(lo + 0.25) - LogMath.normalCdf(lo);
    }
    // Merge the two tiny tail bins into their neighbours so every expected count is >= 5.
    long[] obs = new long[bins - 2];
    double[] exp = new double[bins - 2];
    for (int b = 1; b < bins - 1; b++) {
      obs[b - 1] = observed[b];
      exp[b - 1] = expected[b];
    }
    obs[0] += observed[0];
    exp[0] += expected[0];
    obs[bins - 3] += observed[bins - 1];
    exp[bins - 3] += expected[bins - 1];
    double p = ChiSquareTest.withDefaults().test(exp, obs).getPValue();
    assertThat(p).as("chi-square p-value").isGreaterThan(1e-4);
  }

  @Test
  void secureSource_isStandardNormal() {
    // Not seedable, so this one can fail by chance: probability about 1e-4 per run.
    assertStandardNormal(sample(NoiseSource.secure().forRound("job", 1)));
  }

  @Test
  void keyedSource_isStandardNormal() {
    assertStandardNormal(sample(NoiseSource.keyed(KEY).forRound("job-a", 7)));
  }

  @Test
  void keyedSource_isReproduciblePerKeyJobAndRound() {
    double[] first = sample(NoiseSource.keyed(KEY).forRound("job-a", 7));
    double[] again = sample(NoiseSource.keyed(KEY.clone()).forRound("job-a", 7));
    assertThat(again).isEqualTo(first);
  }

  @Test
  void keyedSource_differsAcrossRoundsJobsAndKeys() {
    double[] base = head(NoiseSource.keyed(KEY).forRound("job-a", 7));
    assertThat(head(NoiseSource.keyed(KEY).forRound("job-a", 8))).isNotEqualTo(base);
    assertThat(head(NoiseSource.keyed(KEY).forRound("job-b", 7))).isNotEqualTo(base);
    byte[] otherKey = KEY.clone();
    otherKey[0] ^= 1;
    assertThat(head(NoiseSource.keyed(otherKey).forRound("job-a", 7))).isNotEqualTo(base);
    // ("job", 12) and ("job1", 2) must not collide through naive concatenation.
    assertThat(head(NoiseSource.keyed(KEY).forRound("job1", 2)))
        .isNotEqualTo(head(NoiseSource.keyed(KEY).forRound("job", 12)));
  }

  @Test
  void secureSource_neverRepeatsAStream() {
    NoiseSource secure = NoiseSource.secure();
    assertThat(head(secure.forRound("job", 1))).isNotEqualTo(head(secure.forRound("job", 1)));
  }

  @Test
  void keyedSource_refusesKeysShorterThan32Bytes_andNeverPrintsTheKey() {
    assertThatThrownBy(() -> NoiseSource.keyed(new byte[8]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("noise key must hold at least 32 bytes, was 8 bytes");
    assertThatThrownBy(() -> NoiseSource.keyed(java.util.Arrays.copyOf(KEY, 31)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("noise key must hold at least 32 bytes, was 31 bytes");
    assertThatThrownBy(() -> NoiseSource.keyed(null))
        .hasMessage("noise key must hold at least 32 bytes, was null");
    assertThat(NoiseSource.keyed(java.util.Arrays.copyOf(KEY, 32)).kind()).isEqualTo("keyed");
    assertThat(NoiseSource.keyed(KEY).toString())
        .isEqualTo("keyed(<secret>)")
        .doesNotContain(HexFormat.of().formatHex(KEY).substring(0, 8));
  }

  @Test
  void zeroSource_addsNothing() {
    double[] target = {1.5, -2.0};
    NoiseSource.zero().forRound("job", 1).addGaussian(target, 10.0);
    assertThat(target).containsExactly(1.5, -2.0);
    assertThat(NoiseSource.zero().kind()).isEqualTo("zero");
  }

  @Test
  void gaussianMechanism_addsNoiseWithStdNoiseMultiplierTimesClipNorm() {
    GaussianMechanism mechanism = new GaussianMechanism(1.5, 0.2);
    double[] sum = new double[N];
    java.util.Arrays.fill(sum, 3.0);
    mechanism.addNoise(sum, NoiseSource.seeded(5).forRound("job", 1));
    double mean = 0;
    for (double v : sum) {
      mean += v / N;
    }
    double var = 0;
    for (double v : sum) {
      var += (v - mean) * (v - mean) / (N - 1);
    }
    double sigma = 0.3;
    assertThat(Math.abs(mean - 3.0)).isLessThan(5 * sigma / Math.sqrt(N));
    assertThat(Math.abs(var / (sigma * sigma) - 1)).isLessThan(5 * Math.sqrt(2.0 / N));
  }

  private static double[] sample(NoiseStream stream) {
    double[] x = new double[N];
    for (int i = 0; i < N; i++) {
      x[i] = stream.nextStandardNormal();
    }
    return x;
  }

  private static double[] head(NoiseStream stream) {
    double[] x = new double[16];
    for (int i = 0; i < x.length; i++) {
      x[i] = stream.nextStandardNormal();
    }
    return x;
  }

  private static void assertStandardNormal(double[] x) {
    double mean = 0;
    for (double v : x) {
      mean += v / x.length;
    }
    double var = 0;
    for (double v : x) {
      var += (v - mean) * (v - mean) / (x.length - 1);
    }
    assertThat(Math.abs(mean)).as("mean").isLessThan(5 / Math.sqrt(x.length));
    assertThat(Math.abs(var - 1)).as("variance").isLessThan(5 * Math.sqrt(2.0 / x.length));
    double p = KolmogorovSmirnovTest.withDefaults().test(x, LogMath::normalCdf).getPValue();
    assertThat(p).as("KS p-value against N(0,1)").isGreaterThan(1e-4);
  }
}
