package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.privacy.GaussianCalibration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.DoubleUnaryOperator;
import java.util.stream.Stream;
import org.apache.commons.statistics.distribution.NormalDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class OneShotEstimateTest {
  private static final double SHIFT = 3.14159;
  private static final double SCALE = 2.71828;

  /** numpy.testing's assertAllClose default, rtol 1e-6 and atol 1e-6, as the reference asserts. */
  private static void assertAllClose(double actual, double expected) {
    assertThat(actual).isCloseTo(expected, within(1e-6 + 1e-6 * Math.abs(expected)));
  }

  /** numpy.logspace(from, to, n). */
  private static double[] logspace(double from, double to, int n) {
    double[] out = new double[n];
    for (int i = 0; i < n; i++) {
      out[i] = Math.pow(10, from + i * (to - from) / (n - 1));
    }
    return out;
  }

  static Stream<Arguments> roundTripCases() {
    List<Arguments> cases = new ArrayList<>();
    for (double eps : new double[] {0.5, 1, 5}) {
      for (double delta : new double[] {1e-5, 1e-2}) {
        for (double sensitivity : new double[] {1e-2, 1, 10}) {
          for (double diff : new double[] {-1e-12, 0, 1e-12}) {
            cases.add(Arguments.of(eps, delta, sensitivity, diff));
          }
        }
      }
    }
    return cases.stream();
  }

  // google-research/federated one_shot_epe/empirical_privacy_estimation_test.py
  // test_epsilon_two_gaussians_stds_close: the Gaussian mechanism calibrated by the analytic
  // Gaussian (tff's analytic_gauss_stddev there, GaussianCalibration here) has exactly that
  // epsilon; diff exercises both the equal-std and the quadratic path. The reference asserts rtol
  // 1e-6; with the cancellation-free roots the quadratic path holds 1e-8 (worst seen 5.9e-10; the
  // reference's textbook roots give 1.3e-7), the equal-std path 1e-14.
  @ParameterizedTest
  @MethodSource("roundTripCases")
  void twoGaussians_recoverTheAnalyticGaussiansEpsilon(
      double eps, double delta, double sensitivity, double diff) {
    double sigma = GaussianCalibration.analyticSigma(eps, delta, sensitivity);
    double estimate =
        OneShotEstimate.epsilonTwoGaussians(0, sigma, sensitivity, sigma + diff, delta);
    assertThat(estimate).isCloseTo(eps, within(1e-8 * eps));
  }

  static Stream<Arguments> unequalStdCases() {
    List<Arguments> cases = new ArrayList<>();
    for (double delta : new double[] {2e-2, 1e-1, 2e-1}) {
      for (int trial = 0; trial < 20; trial++) {
        cases.add(Arguments.of(delta, trial));
      }
    }
    return cases.stream();
  }

  // empirical_privacy_estimation_test.py test_epsilon_two_gaussians_stds_not_equal, with the Monte
  // Carlo estimate of delta (1e6 samples, tolerance 1e-2) replaced by numerical integration of
  // max(0, p1 - e^eps p2) in both directions, so the tolerance can be 1e-8 relative. Parameters
  // are uniform on (0, 5) from Java seeds instead of numpy's.
  @ParameterizedTest
  @MethodSource("unequalStdCases")
  void twoGaussians_deltaAtTheEstimateIsTheTarget(double delta, int trial) {
    SplittableRandom random = new SplittableRandom(0xBAD5EEDL + trial);
    double mu1 = random.nextDouble(0, 5);
    double std1 = random.nextDouble(0, 5);
    double mu2 = random.nextDouble(0, 5);
    double std2 = random.nextDouble(0, 5);
    double eps = OneShotEstimate.epsilonTwoGaussians(mu1, std1, mu2, std2, delta);
    double achieved =
        Math.max(hockeyStick(mu1, std1, mu2, std2, eps), hockeyStick(mu2, std2, mu1, std1, eps));
    if (eps == 0) {
      assertThat(achieved).isLessThanOrEqualTo(delta);
    } else {
      assertThat(achieved).isCloseTo(delta, within(1e-8 * delta));
    }
  }

  /**
   * The integral of max(0, p1 - e^eps p2), p_i the N(mu_i, std_i^2) densities: Gauss-Legendre on
   * panels of half a std of each law over 40 stds, cut also where p1 = e^eps p2 (found by scanning
   * and bisection, not by the code under test) and graded towards those points, so the integrand is
   * smooth and resolved on every panel.
   */
  private static double hockeyStick(double mu1, double std1, double mu2, double std2, double eps) {
    DoubleUnaryOperator logRatio = y -> logDensity(y, mu1, std1) - logDensity(y, mu2, std2) - eps;
    List<Double> cuts = new ArrayList<>();
    for (int j = -80; j <= 80; j++) {
      cuts.add(mu1 + 0.5 * j * std1);
      cuts.add(mu2 + 0.5 * j * std2);
    }
    double[] grid = cuts.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    for (int k = 0; k + 1 < grid.length; k++) {
      double lo = grid[k];
      double hi = grid[k + 1];
      double fLo = logRatio.applyAsDouble(lo);
      if ((fLo > 0) != (logRatio.applyAsDouble(hi) > 0)) {
        for (int step = 0; step < 200 && hi - lo > 1e-15 * Math.abs(lo); step++) {
          double mid = 0.5 * (lo + hi);
          if ((logRatio.applyAsDouble(mid) > 0) == (fLo > 0)) {
            lo = mid;
          } else {
            hi = mid;
          }
        }
        // Graded panels on both sides: next to the root the loss changes fast (by about
        // y / std^2), so 1 - e^(eps - loss) rises from 0 to 1 over a small fraction of a panel.
        double root = 0.5 * (lo + hi);
        double width = grid[k + 1] - grid[k];
        for (int j = 0; j < 50; j++) {
          cuts.add(root - width * Math.scalb(1.0, -j));
          cuts.add(root + width * Math.scalb(1.0, -j));
        }
        cuts.add(root);
      }
    }
    // p1 max(0, 1 - e^(eps + log p2 - log p1)): no e^eps, which overflows at the largest eps here.
    return Quadrature.overPanels(
        y -> {
          double logP1 = logDensity(y, mu1, std1);
          double logP2 = logDensity(y, mu2, std2);
          return Math.exp(logP1) * Math.max(0, -Math.expm1(eps + logP2 - logP1));
        },
        cuts.stream().mapToDouble(Double::doubleValue).sorted().toArray());
  }

  private static double logDensity(double y, double mu, double std) {
    double z = (y - mu) / std;
    return -0.5 * z * z - Math.log(std * Math.sqrt(2 * Math.PI));
  }

  // Andrew et al.: the one-shot estimate of a Gaussian mechanism is its epsilon. Here the fit to
  // 20,000 normal quantiles (a sample std about 0.9997) against Balle and Wang's exact epsilon.
  @Test
  void epsilonHat_ofGaussianMechanismScores_isItsEpsilon() {
    int n = 20_000;
    NormalDistribution normal = NormalDistribution.of(0, 1);
    double[] unseen = new double[n];
    double[] seen = new double[n];
    for (int i = 0; i < n; i++) {
      unseen[i] = normal.inverseCumulativeProbability((i + 0.5) / n);
      seen[i] = 1 + unseen[i];
    }
    assertThat(OneShotEstimate.epsilonHat(seen, unseen, 1e-5))
        .isCloseTo(GaussianCalibration.gaussianEpsilon(1, 1e-5), within(2e-3));
  }

  @Test
  void epsilonHat_isTwoGaussiansOfTheFits() {
    double[] seen = OneShotSamples.firstNormals(1, 1);
    double[] unseen = OneShotSamples.secondNormals(0, 1);
    GaussianFit s = GaussianFit.of(seen);
    GaussianFit u = GaussianFit.of(unseen);
    assertThat(OneShotEstimate.epsilonHat(seen, unseen, 1e-5))
        .isEqualTo(OneShotEstimate.epsilonTwoGaussians(u.mean(), u.std(), s.mean(), s.std(), 1e-5));
  }

  @Test
  void twoGaussians_identicalLaws_giveZero() {
    assertThat(OneShotEstimate.epsilonTwoGaussians(1, 2, 1, 2, 1e-9)).isZero();
  }

  // empirical_privacy_estimation_test.py test_two_gaussians_invariant_to_affine_transform.
  @ParameterizedTest
  @CsvSource({"1e-5", "1e-2"})
  void twoGaussians_invariantToAffineTransform(double delta) {
    double[] jitter = OneShotSamples.uniforms(-0.2, 0.2, 4);
    double mu0 = 0.0 + jitter[0];
    double std0 = 1.0 + jitter[1];
    double mu1 = 1.0 + jitter[2];
    double std1 = 1.0 + jitter[3];
    double eps1 = OneShotEstimate.epsilonTwoGaussians(mu0, std0, mu1, std1, delta);
    double eps2 =
        OneShotEstimate.epsilonTwoGaussians(
            mu0 * SCALE + SHIFT, std0 * SCALE, mu1 * SCALE + SHIFT, std1 * SCALE, delta);
    assertAllClose(eps2, eps1);
  }

  // Published: empirical_privacy_estimation_test.py test_optimal_epsilon_lower_bound_regression
  // (numpy default_rng(0xBAD5EED) samples from the resource file), rtol 1e-6. The full value is the
  // reference library run locally on the same samples (numpy 2.4.6, scipy 1.17.1), to 1e-10.
  @Test
  void optimalLowerBound_reproducesReference() {
    double[] cosines = OneShotSamples.firstNormals(1.0, 1.0);
    double[] unseen = OneShotSamples.secondNormals(0.0, 1.0);
    double eps = OneShotEstimate.optimalEpsilonLowerBound(cosines, unseen, 1e-2, 1e-2);
    assertAllClose(eps, 0.6839449);
    assertThat(eps).isCloseTo(0.6839449141130043, within(1e-10 * eps));
  }

  // Published: test_lower_bound_closed_form_null_regression, rtol 1e-6; full values from the
  // reference run locally as above, to 1e-10 (its CDF by quadrature, here the incomplete beta).
  @ParameterizedTest
  @CsvSource({"200, 1.394838, 1.3948381721745755", "2000, 1.3880321, 1.3880320635322159"})
  void optimalLowerBoundClosedFormNull_reproducesReference(
      int dim, double published, double computed) {
    double sigma = Math.pow(dim, -0.5);
    double[] cosines = OneShotSamples.firstNormals(sigma, sigma);
    double eps = OneShotEstimate.optimalEpsilonLowerBoundClosedFormNull(cosines, dim, 1e-2, 1e-2);
    assertAllClose(eps, published);
    assertThat(eps).isCloseTo(computed, within(1e-10 * computed));
  }

  // Published: test_closed_form_null_gaussian_alt_regression, rtol 1e-6; full values as above.
  @ParameterizedTest
  @CsvSource({"200, 2.375326, 2.3753262671922677", "2000, 2.317789, 2.3177890403040493"})
  void closedFormNullGaussianAlt_reproducesReference(int dim, double published, double computed) {
    double sigma = Math.pow(dim, -0.5);
    double eps = OneShotEstimate.epsilonClosedFormNullGaussianAlt(sigma, sigma, dim, 1e-2);
    assertAllClose(eps, published);
    assertThat(eps).isCloseTo(computed, within(1e-10 * computed));
  }

  static Stream<Arguments> sigmaDelta() {
    return cross(new double[] {0.1, 0.5, 2.0}, new double[] {1e-5, 1e-2});
  }

  static Stream<Arguments> sigmaAlpha() {
    return cross(new double[] {0.1, 0.5, 2.0}, new double[] {1e-3, 1e-2});
  }

  static Stream<Arguments> deltaDim() {
    return cross(new double[] {1e-5, 1e-2}, new double[] {200, 2000});
  }

  static Stream<Arguments> alphaDim() {
    return cross(new double[] {1e-3, 1e-2}, new double[] {200, 2000});
  }

  // test_lower_bound_increases_with_alpha.
  @ParameterizedTest
  @MethodSource("sigmaDelta")
  void lowerBound_increasesWithAlpha(double sigma, double delta) {
    double[] cosines = OneShotSamples.firstNormals(1.0, sigma);
    double[] unseen = OneShotSamples.secondNormals(0, sigma);
    double previous = Double.NEGATIVE_INFINITY;
    for (double alpha : logspace(-3, -1, 10)) {
      double eps = OneShotEstimate.optimalEpsilonLowerBound(cosines, unseen, alpha, delta);
      assertThat(eps).isGreaterThanOrEqualTo(previous);
      previous = eps;
    }
  }

  // test_lower_bound_decreases_with_delta.
  @ParameterizedTest
  @MethodSource("sigmaAlpha")
  void lowerBound_decreasesWithDelta(double sigma, double alpha) {
    double[] cosines = OneShotSamples.firstNormals(1.0, sigma);
    double[] unseen = OneShotSamples.secondNormals(0, sigma);
    double previous = Double.POSITIVE_INFINITY;
    for (double delta : logspace(-6, -1, 10)) {
      double eps = OneShotEstimate.optimalEpsilonLowerBound(cosines, unseen, alpha, delta);
      assertThat(eps).isLessThanOrEqualTo(previous);
      previous = eps;
    }
  }

  // test_lower_bound_closed_form_null_increases_with_alpha.
  @ParameterizedTest
  @MethodSource("deltaDim")
  void lowerBoundClosedFormNull_increasesWithAlpha(double delta, double dim) {
    double[] cosines = OneShotSamples.uniforms(1e-1, 2e-1, 100);
    double previous = Double.NEGATIVE_INFINITY;
    for (double alpha : logspace(-3, -1, 10)) {
      double eps =
          OneShotEstimate.optimalEpsilonLowerBoundClosedFormNull(cosines, (int) dim, alpha, delta);
      assertThat(eps).isGreaterThanOrEqualTo(previous);
      previous = eps;
    }
  }

  // test_lower_bound_closed_form_null_decreases_with_delta.
  @ParameterizedTest
  @MethodSource("alphaDim")
  void lowerBoundClosedFormNull_decreasesWithDelta(double alpha, double dim) {
    double[] cosines = OneShotSamples.uniforms(1e-1, 2e-1, 100);
    double previous = Double.POSITIVE_INFINITY;
    for (double delta : logspace(-6, -1, 10)) {
      double eps =
          OneShotEstimate.optimalEpsilonLowerBoundClosedFormNull(cosines, (int) dim, alpha, delta);
      assertThat(eps).isLessThanOrEqualTo(previous);
      previous = eps;
    }
  }

  static Stream<Arguments> sigmaAlphaDelta() {
    List<Arguments> cases = new ArrayList<>();
    for (double sigma : new double[] {0.1, 0.5, 2.0}) {
      for (double alpha : new double[] {1e-3, 1e-2}) {
        for (double delta : new double[] {1e-5, 1e-2}) {
          cases.add(Arguments.of(sigma, alpha, delta));
        }
      }
    }
    return cases.stream();
  }

  // test_lower_bound_invariant_to_affine_transform.
  @ParameterizedTest
  @MethodSource("sigmaAlphaDelta")
  void lowerBound_invariantToAffineTransform(double sigma, double alpha, double delta) {
    double[] cosines = OneShotSamples.firstNormals(1.0, sigma);
    double[] unseen = OneShotSamples.secondNormals(0, sigma);
    double eps1 = OneShotEstimate.optimalEpsilonLowerBound(cosines, unseen, alpha, delta);
    for (int i = 0; i < cosines.length; i++) {
      cosines[i] = cosines[i] * SCALE + SHIFT;
      unseen[i] = unseen[i] * SCALE + SHIFT;
    }
    assertAllClose(OneShotEstimate.optimalEpsilonLowerBound(cosines, unseen, alpha, delta), eps1);
  }

  // test_closed_form_null_gaussian_alt_decreases_with_delta.
  @ParameterizedTest
  @CsvSource({"200", "2000"})
  void closedFormNullGaussianAlt_decreasesWithDelta(int dim) {
    double sigma = Math.pow(dim, -0.5);
    double previous = Double.POSITIVE_INFINITY;
    for (double delta : logspace(-6, -1, 10)) {
      double eps = OneShotEstimate.epsilonClosedFormNullGaussianAlt(sigma, sigma, dim, delta);
      assertThat(eps).isLessThanOrEqualTo(previous);
      previous = eps;
    }
  }

  // test_closed_form_null_gaussian_alt_increases_with_mu.
  @ParameterizedTest
  @MethodSource("deltaDim")
  void closedFormNullGaussianAlt_increasesWithMu(double delta, double dim) {
    double sigma = Math.pow(dim, -0.5);
    double previous = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < 8; i++) {
      double mu = sigma / 4 + i * (2 * sigma - sigma / 4) / 7;
      double eps = OneShotEstimate.epsilonClosedFormNullGaussianAlt(mu, sigma, (int) dim, delta);
      assertThat(eps).isGreaterThanOrEqualTo(previous);
      previous = eps;
    }
  }

  // Where both apply, the exact null at dim 999 and its Gaussian stand-in N(0, 1/dim) give nearly
  // the same estimate, which is why the reference switches at 1000.
  @Test
  void closedFormNullGaussianAlt_exactAndGaussianNullAgreeNearTheSwitch() {
    double sigma = Math.pow(999, -0.5);
    double exact = OneShotEstimate.epsilonClosedFormNullGaussianAlt(sigma, sigma, 999, 1e-2);
    double gaussian = OneShotEstimate.epsilonTwoGaussians(0, sigma, sigma, sigma, 1e-2);
    assertThat(exact).isCloseTo(gaussian, within(1e-2 * gaussian));
  }

  @Test
  void epsilonFromRates_isTheBetterSide_andNothingWhereARateReachesOneMinusDelta() {
    // FPR 0.01, FNR 0.5: log((1 - 0.5) / 0.01) beats log((1 - 0.01) / 0.5).
    assertThat(OneShotEstimate.epsilonFromRates(Math.log(0.01), Math.log(0.5), 0))
        .isCloseTo(Math.log(50), within(1e-14));
    assertThat(OneShotEstimate.epsilonFromRates(Math.log(0.5), Math.log(0.01), 0))
        .isCloseTo(Math.log(50), within(1e-14));
    // With delta 0.1: log((1 - 0.1 - 0.5) / 0.01).
    assertThat(OneShotEstimate.epsilonFromRates(Math.log(0.01), Math.log(0.5), 0.1))
        .isCloseTo(Math.log(40), within(1e-14));
    // FNR above 1 - delta and FPR at it: neither side bounds anything.
    assertThat(OneShotEstimate.epsilonFromRates(Math.log(0.9), Math.log(0.95), 0.1)).isZero();
  }

  @Test
  void jeffreysHigh_isTheBetaQuantile() {
    // scipy.stats.beta.interval(1 - 2 * 0.01, 0.5, 100.5)[1] = 0.032549891808670545.
    assertThat(OneShotEstimate.jeffreysHigh(0, 100, 0.01))
        .isCloseTo(0.032549891808670545, within(1e-15));
  }

  @Test
  void invalidArguments_areRefusedByName() {
    double[] ok = {0.1, 0.2};
    assertThatThrownBy(() -> OneShotEstimate.epsilonTwoGaussians(0, 0, 1, 1, 1e-5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("std1 must be > 0 and finite, was 0.0");
    assertThatThrownBy(() -> OneShotEstimate.epsilonTwoGaussians(0, 1, 1, 1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delta must be in (0, 1), was 0.0");
    assertThatThrownBy(() -> OneShotEstimate.epsilonClosedFormNullGaussianAlt(-0.1, 0.1, 200, 0.1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("mu must be > 0 below dim 1000, was -0.1");
    assertThatThrownBy(() -> OneShotEstimate.optimalEpsilonLowerBound(ok, new double[0], 0.01, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unseen must be non-empty");
    assertThatThrownBy(() -> OneShotEstimate.optimalEpsilonLowerBound(ok, ok, 0.5, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("alpha (the allowed failure probability) must be in (0, 0.5), was 0.5");
    assertThatThrownBy(() -> OneShotEstimate.optimalEpsilonLowerBound(ok, ok, 0.01, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delta must be in [0, 1), was 1.0");
    assertThatThrownBy(
            () ->
                OneShotEstimate.optimalEpsilonLowerBoundClosedFormNull(
                    new double[] {0.5, 1.5}, 200, 0.01, 0.01))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("seenCosines must be in [-1, 1], had 1.5");
    assertThatThrownBy(
            () -> OneShotEstimate.optimalEpsilonLowerBoundClosedFormNull(ok, 1, 0.01, 0.01))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dim must be >= 2, was 1");
  }

  private static Stream<Arguments> cross(double[] first, double[] second) {
    List<Arguments> cases = new ArrayList<>();
    for (double a : first) {
      for (double b : second) {
        cases.add(Arguments.of(a, b));
      }
    }
    return cases.stream();
  }
}
