package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;
import org.apache.commons.statistics.distribution.ChiSquaredDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The exact sampler against the discrete Gaussian's pmf, exp(-x^2 / (2 sigma^2)) normalized (CKS20
 * Definition 1). Each chi-square test fails by chance with probability 10^-6 (fixed seeds, so in
 * fact never or always); the same test rejects a rounded continuous Gaussian at small sigma, where
 * the two differ.
 */
class DiscreteGaussianTest {
  private static final int DRAWS = 1_000_000;
  private static final double FALSE_FAILURE = 1e-6;

  @ParameterizedTest(name = "sigma^2 = {0}/{1}")
  // The last: a share's variance as plans make it (2^-20 resolution, sigma about 113), whose
  // rejection step runs on BigInteger (its denominator is past 2^56).
  @CsvSource({
    "1, 4",
    "1, 1",
    "25, 4",
    "100, 1",
    "1000000, 1",
    "5000001, 1048576",
    "13284803405, 1048576"
  })
  void drawsFollowThePmf(long numerator, long denominator) {
    DiscreteGaussian gaussian = DiscreteGaussian.ofVariance(numerator, denominator);
    SplittableRandom random = new SplittableRandom(numerator * 31 + denominator);
    ChiSquare test = chiSquare(() -> gaussian.sample(random), (double) numerator / denominator);
    assertThat(test.statistic)
        .as("chi-square over %d cells of N_Z(0, %d/%d)", test.cells, numerator, denominator)
        .isLessThan(test.threshold);
  }

  @Test
  void theSameTestRejectsARoundedContinuousGaussianAtSmallSigma() {
    SplittableRandom random = new SplittableRandom(7);
    ChiSquare test = chiSquare(() -> Math.round(0.5 * random.nextGaussian()), 0.25);
    assertThat(test.statistic).isGreaterThan(test.threshold);
  }

  @ParameterizedTest(name = "gamma = {0}/{1}")
  @CsvSource({"3, 10", "17, 10", "0, 5", "5, 5", "123456789012345678901, 72057594037927936"})
  void bernoulliExpMinusHasProbabilityExpMinusGamma(String n, String d) {
    BigInteger num = new BigInteger(n);
    BigInteger den = new BigInteger(d);
    SplittableRandom random = new SplittableRandom(11);
    int hits = 0;
    int trials = 400_000;
    for (int i = 0; i < trials; i++) {
      hits += DiscreteGaussian.bernoulliExpMinus(num, den, random) ? 1 : 0;
    }
    double p = Math.exp(-num.doubleValue() / den.doubleValue());
    // 5.3 standard errors: fails by chance with probability about 10^-7.
    double tolerance = 5.3 * Math.sqrt(p * (1 - p) / trials) + 1e-12;
    assertThat((double) hits / trials).isCloseTo(p, org.assertj.core.data.Offset.offset(tolerance));
  }

  @Test
  void discreteLaplaceFollowsItsPmf() {
    long t = 3;
    SplittableRandom random = new SplittableRandom(5);
    Map<Long, Integer> counts = new HashMap<>();
    for (int i = 0; i < DRAWS; i++) {
      counts.merge(DiscreteGaussian.discreteLaplace(t, random), 1, Integer::sum);
    }
    double norm = (1 - Math.exp(-1.0 / t)) / (1 + Math.exp(-1.0 / t));
    double statistic = 0;
    int cells = 0;
    double tail = DRAWS;
    long tailCount = DRAWS;
    for (long x = -20; x <= 20; x++) {
      double expected = DRAWS * norm * Math.exp(-Math.abs(x) / (double) t);
      int seen = counts.getOrDefault(x, 0);
      statistic += (seen - expected) * (seen - expected) / expected;
      tail -= expected;
      tailCount -= seen;
      cells++;
    }
    statistic += (tailCount - tail) * (tailCount - tail) / tail;
    assertThat(statistic).isLessThan(quantile(cells));
  }

  @Test
  void plannedVarianceIsNeverBelowTheAskedOne() {
    for (double v : new double[] {0.3, 1, 2.5e-7, 12345.678, 0x1p40}) {
      DiscreteGaussian g = DiscreteGaussian.withVarianceAtLeast(v);
      assertThat(BigInteger.valueOf(g.varianceNumerator()))
          .as("numerator for %s", v)
          .isGreaterThanOrEqualTo(
              new java.math.BigDecimal(v)
                  .multiply(java.math.BigDecimal.valueOf(g.varianceDenominator()))
                  .setScale(0, java.math.RoundingMode.CEILING)
                  .toBigIntegerExact());
      assertThat(g.sigmaSquared())
          .isGreaterThanOrEqualTo(v)
          .isLessThanOrEqualTo(v + Math.max(1e-6, Math.ulp(v)));
    }
    assertThatThrownBy(() -> DiscreteGaussian.withVarianceAtLeast(0))
        .hasMessageContaining("variance must be > 0");
    assertThatThrownBy(() -> DiscreteGaussian.ofVariance(1, 0))
        .hasMessageContaining("positive rational");
  }

  private record ChiSquare(double statistic, int cells, double threshold) {}

  /**
   * Pearson's statistic of {@link #DRAWS} draws against N_Z(0, variance): a cell per integer whose
   * expected count is at least 5, and one for the rest.
   */
  private static ChiSquare chiSquare(LongSupplier draw, double variance) {
    long reach = (long) Math.ceil(14 * Math.sqrt(variance)) + 5;
    double[] weights = new double[(int) (2 * reach + 1)];
    double total = 0;
    for (long x = -reach; x <= reach; x++) {
      double w = Math.exp(-(double) x * x / (2 * variance));
      weights[(int) (x + reach)] = w;
      total += w;
    }
    Map<Long, Integer> counts = new HashMap<>();
    for (int i = 0; i < DRAWS; i++) {
      counts.merge(draw.getAsLong(), 1, Integer::sum);
    }
    double statistic = 0;
    int cells = 0;
    double restExpected = 0;
    long restSeen = 0;
    for (long x = -reach; x <= reach; x++) {
      double expected = DRAWS * weights[(int) (x + reach)] / total;
      int seen = counts.getOrDefault(x, 0);
      if (expected >= 5) {
        statistic += (seen - expected) * (seen - expected) / expected;
        cells++;
      } else {
        restExpected += expected;
        restSeen += seen;
      }
    }
    for (Map.Entry<Long, Integer> e : counts.entrySet()) {
      if (Math.abs(e.getKey()) > reach) {
        restSeen += e.getValue();
      }
    }
    if (restExpected > 0) {
      statistic += (restSeen - restExpected) * (restSeen - restExpected) / restExpected;
      cells++;
    } else if (restSeen > 0) {
      statistic = Double.POSITIVE_INFINITY;
    }
    return new ChiSquare(statistic, cells, quantile(cells));
  }

  private static double quantile(int cells) {
    return ChiSquaredDistribution.of(cells - 1).inverseSurvivalProbability(FALSE_FAILURE);
  }
}
