package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * KLS21's bound against the exact Renyi divergence where it can be computed (a sum of two or three
 * discrete Gaussian shares in one dimension, by convolving the pmfs), and against its own formula.
 */
class DistributedDiscreteGaussianTest {

  @ParameterizedTest(name = "n = {0}, sigma^2 = {1}, shift {2}")
  @CsvSource({
    "2, 0.25, 1",
    "2, 0.5, 1",
    "2, 1, 2",
    "3, 0.3, 1",
    "3, 2, 3",
    "2, 4, 1",
    "1, 0.25, 1"
  })
  void theBoundAndItsGaussianAreNeverBelowTheExactDivergence(int n, double sigma2, int shift) {
    double[] logP = logPmfOfSum(n, sigma2, 400);
    for (double alpha : new double[] {1.5, 2, 4, 8, 16, 32}) {
      double exact =
          Math.max(renyi(logP, shift, alpha), renyi(logP, -shift, alpha)); // both directions
      double bound = DistributedDiscreteGaussian.rdp(alpha, shift, shift, sigma2, n, 1);
      double z = DistributedDiscreteGaussian.dominatingNoiseMultiplier(shift, sigma2, n, 1);
      // The convolution's own rounding is about 1e-14 of the value; a shortfall of the bound beyond
      // that is real.
      double floor = exact * (1 - 1e-12);
      assertThat(bound).as("bound at alpha %s", alpha).isGreaterThanOrEqualTo(floor);
      assertThat(alpha / (2 * z * z))
          .as("dominating Gaussian at alpha %s", alpha)
          .isGreaterThanOrEqualTo(floor);
    }
  }

  @Test
  void oneShareIsTheDiscreteGaussianWhoseDivergenceIsExactlyTheGaussians() {
    // CKS20 Proposition 5: for an integer shift the discrete Gaussian's Renyi divergence equals
    // alpha shift^2 / (2 sigma^2); tau is 0 for one share, so the bound is tight.
    double[] logP = logPmfOfSum(1, 1.7, 400);
    for (double alpha : new double[] {2, 5}) {
      assertThat(DistributedDiscreteGaussian.rdp(alpha, 2, 2, 1.7, 1, 1))
          .isCloseTo(renyi(logP, 2, alpha), within(1e-9));
    }
  }

  @Test
  void theChargedGaussianDominatesTheBoundsFirstTermAtEveryOrderDownToOne() {
    // n = 3 shares of sigma^2 = 0.3 over d = 100: tau d is large, so the Gaussian must absorb it
    // at orders near 1 too, where alpha tau d / alpha is the whole of it.
    double z = DistributedDiscreteGaussian.dominatingNoiseMultiplier(2, 0.3, 3, 100);
    double tau = DistributedDiscreteGaussian.tau(0.3, 3);
    for (double alpha : new double[] {1.0001, 1.01, 1.5, 2, 10, 100}) {
      double first = alpha * 4 / (2 * 3 * 0.3) + tau * 100;
      assertThat(alpha / (2 * z * z))
          .as("alpha %s", alpha)
          .isGreaterThanOrEqualTo(first * (1 - 1e-12));
    }
  }

  @Test
  void tauFollowsTheTheoremsSum() {
    // n = 2: one term, 10 exp(-pi^2 sigma^2).
    assertThat(DistributedDiscreteGaussian.tau(0.5, 2))
        .isCloseTo(10 * Math.exp(-Math.PI * Math.PI * 0.5), withinPercentage(1e-6));
    // n = 3: 10 (exp(-pi^2 s) + exp(-4 pi^2 s / 3)).
    double s = 0.3;
    assertThat(DistributedDiscreteGaussian.tau(s, 3))
        .isCloseTo(
            10 * (Math.exp(-Math.PI * Math.PI * s) + Math.exp(-4 * Math.PI * Math.PI * s / 3)),
            withinPercentage(1e-6));
    assertThat(DistributedDiscreteGaussian.tau(s, 1)).isZero();
    // Large shares: tau underflows and the charge is the central Gaussian's.
    assertThat(DistributedDiscreteGaussian.dominatingNoiseMultiplier(100, 1e6, 50, 1 << 20))
        .isEqualTo(Math.sqrt(50 * 1e6) / 100);
  }

  @Test
  void refusesWhatTheTheoremDoesNotCover() {
    assertThatThrownBy(() -> DistributedDiscreteGaussian.tau(0.2, 3))
        .hasMessageContaining("sigma^2 must be >= 1/4");
    assertThatThrownBy(() -> DistributedDiscreteGaussian.rdp(1, 1, 1, 1, 2, 1))
        .hasMessageContaining("alpha must be > 1");
    assertThatThrownBy(() -> DistributedDiscreteGaussian.rdp(2, 2, 1, 1, 2, 1))
        .hasMessageContaining("l2 <= l1");
  }

  /** log pmf of the sum of n N_Z(0, sigma2) shares on [-reach, reach] (index + reach). */
  private static double[] logPmfOfSum(int n, double sigma2, int reach) {
    int size = 2 * reach + 1;
    double[] one = new double[size];
    double norm = Double.NEGATIVE_INFINITY;
    for (int x = -reach; x <= reach; x++) {
      one[x + reach] = -(double) x * x / (2 * sigma2);
      norm = logAdd(norm, one[x + reach]);
    }
    for (int i = 0; i < size; i++) {
      one[i] -= norm;
    }
    double[] sum = one.clone();
    for (int share = 2; share <= n; share++) {
      double[] next = new double[size];
      java.util.Arrays.fill(next, Double.NEGATIVE_INFINITY);
      for (int s = -reach; s <= reach; s++) {
        for (int y = -reach; y <= reach; y++) {
          int rest = s - y;
          if (rest >= -reach && rest <= reach) {
            next[s + reach] = logAdd(next[s + reach], one[y + reach] + sum[rest + reach]);
          }
        }
      }
      sum = next;
    }
    return sum;
  }

  /** D_alpha(P || P shifted by shift), over the support where both are represented. */
  private static double renyi(double[] logP, int shift, double alpha) {
    int reach = (logP.length - 1) / 2;
    double total = Double.NEGATIVE_INFINITY;
    for (int s = -reach + Math.abs(shift); s <= reach - Math.abs(shift); s++) {
      double p = logP[s + reach];
      double q = logP[s - shift + reach];
      total = logAdd(total, alpha * p + (1 - alpha) * q);
    }
    return total / (alpha - 1);
  }

  private static double logAdd(double a, double b) {
    if (a == Double.NEGATIVE_INFINITY) {
      return b;
    }
    if (b == Double.NEGATIVE_INFINITY) {
      return a;
    }
    double max = Math.max(a, b);
    return max + Math.log1p(Math.exp(Math.min(a, b) - max));
  }
}
