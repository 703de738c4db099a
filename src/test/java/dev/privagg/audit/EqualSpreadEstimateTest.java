package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.privacy.GaussianCalibration;
import java.util.SplittableRandom;
import org.apache.commons.statistics.distribution.NormalDistribution;
import org.junit.jupiter.api.Test;

class EqualSpreadEstimateTest {
  private static final double DELTA = 1e-5;

  /** n scores at the normal's quantiles (i + 1/2) / n: a sample without sampling noise. */
  private static double[] quantiles(double mean, double sd, int n) {
    NormalDistribution normal = NormalDistribution.of(mean, sd);
    double[] v = new double[n];
    for (int i = 0; i < n; i++) {
      v[i] = normal.inverseCumulativeProbability((i + 0.5) / n);
    }
    return v;
  }

  @Test
  void twoNormalsOfOneSpread_giveTheirSeparation_andItsGaussianEpsilon() {
    double mu = 1.4;
    EqualSpreadEstimate e =
        EqualSpreadEstimate.of(quantiles(3 + 0.2 * mu, 0.2, 1000), quantiles(3, 0.2, 1000), 0.025);
    // The quantile samples' spreads are equal and a hair under 0.2, their means exact.
    assertThat(e.mu()).isCloseTo(mu, within(0.01));
    assertThat(e.epsilon(DELTA))
        .isCloseTo(GaussianCalibration.gaussianEpsilon(1 / mu, DELTA), within(0.05));
    // The low end is about 1.96 standard errors below: sqrt(2/1000 + mu^2/4000) = 0.0521.
    assertThat(e.mu() - e.muLow()).isCloseTo(1.96 * 0.0521, within(0.005));
    assertThat(e.epsilonLow(DELTA)).isLessThan(e.epsilon(DELTA));
  }

  @Test
  void insertedBelowUnseen_isNoSeparation_andNoSpread_isAllOrNothing() {
    EqualSpreadEstimate below =
        EqualSpreadEstimate.of(quantiles(-1, 1, 100), quantiles(0, 1, 100), 0.025);
    assertThat(below.mu()).isNegative();
    assertThat(below.epsilon(DELTA)).isZero();
    assertThat(below.epsilonLow(DELTA)).isZero();
    double[] same = {0.5, 0.5, 0.5};
    assertThat(EqualSpreadEstimate.of(same, new double[] {0, 0, 0}, 0.025).epsilonLow(DELTA))
        .isInfinite();
    assertThat(EqualSpreadEstimate.of(same, same.clone(), 0.025).epsilon(DELTA)).isZero();
  }

  /**
   * The low end is an exact confidence limit: over 2,000 runs of 100 inserted and 100 unseen scores
   * whose true separation is mu = 1.4, it lies above 1.4 in 29 to 73 of them, as Binomial(2000,
   * 0.025) does with probability 0.9988 (so a correct limit fails this test with probability
   * 0.0012, and a limit at the 5% level passes it with probability 0.0023). Fixed seed, any
   * location and scale.
   */
  @Test
  void theLowEnd_exceedsTheTrueSeparation_inAlphaOfRuns() {
    double mu = 1.4;
    SplittableRandom random = new SplittableRandom(20_260_501L);
    int runs = 2000;
    int above = 0;
    double[] in = new double[100];
    double[] out = new double[100];
    for (int run = 0; run < runs; run++) {
      for (int i = 0; i < in.length; i++) {
        in[i] = 0.01 + 0.003 * (mu + random.nextGaussian());
        out[i] = 0.01 + 0.003 * random.nextGaussian();
      }
      if (EqualSpreadEstimate.of(in, out, 0.025).muLow() > mu) {
        above++;
      }
    }
    assertThat(above).isBetween(29, 73);
  }

  @Test
  void alphaOutOfRange_isRefused_namingAlpha() {
    assertThatThrownBy(() -> EqualSpreadEstimate.of(new double[] {1, 2}, new double[] {0, 1}, 0.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("alpha must be in (0, 0.5), was 0.5");
  }
}
