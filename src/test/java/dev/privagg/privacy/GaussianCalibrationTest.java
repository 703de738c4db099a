package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.withinPercentage;

import org.junit.jupiter.api.Test;

class GaussianCalibrationTest {

  @Test
  void analytic_matchesBalleWang_epsilon1_delta1e5() {
    // Balle and Wang 2018 (analytic Gaussian; reference implementation calibrateAnalyticGaussian
    // Mechanism): epsilon 1, delta 1e-5, sensitivity 1 -> sigma ~ 3.7306. Tolerance 1e-4 relative.
    assertThat(GaussianCalibration.analyticSigma(1, 1e-5, 1))
        .isCloseTo(3.7306, withinPercentage(0.01));
  }

  @Test
  void analytic_isTight_deltaAtSigmaEqualsTarget() {
    double sigma = GaussianCalibration.analyticSigma(0.5, 1e-6, 2.0);
    assertThat(GaussianCalibration.gaussianDelta(0.5, sigma / 2.0))
        .isLessThanOrEqualTo(1e-6)
        .isCloseTo(1e-6, withinPercentage(1e-6));
  }

  @Test
  void analytic_scalesLinearlyWithSensitivity() {
    assertThat(GaussianCalibration.analyticSigma(2, 1e-5, 3.0))
        .isCloseTo(3 * GaussianCalibration.analyticSigma(2, 1e-5, 1.0), withinPercentage(1e-9));
  }

  @Test
  void classic_isTheTextbookFormula() {
    // Dwork and Roth 2014, Thm A.1: sqrt(2 ln(1.25/delta)) / epsilon; at delta 1e-5 the factor
    // is 4.8448 (the formula's value at epsilon 1, which the rule below refuses).
    assertThat(GaussianCalibration.classicSigma(0.5, 1e-5, 1))
        .isCloseTo(4.8448 / 0.5, withinPercentage(0.01));
    assertThat(GaussianCalibration.classicSigma(0.999999, 1e-5, 1))
        .isCloseTo(4.8448, withinPercentage(0.01));
  }

  @Test
  void classic_isLooserThanAnalytic() {
    for (double eps : new double[] {0.1, 0.5, 0.9}) {
      assertThat(GaussianCalibration.classicSigma(eps, 1e-5, 1))
          .isGreaterThan(GaussianCalibration.analyticSigma(eps, 1e-5, 1));
    }
  }

  @Test
  void classic_refusesEpsilonAtLeastOne_namingTheAnalyticCalibration() {
    assertThatThrownBy(() -> GaussianCalibration.classicSigma(1.0, 1e-5, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("only valid for epsilon < 1, was 1.0")
        .hasMessageContaining("use the analytic calibration (Balle and Wang 2018)");
  }

  @Test
  void gaussianEpsilon_invertsGaussianDelta() {
    double eps = GaussianCalibration.gaussianEpsilon(3.7306, 1e-5);
    assertThat(eps).isCloseTo(1.0, withinPercentage(0.01));
    assertThat(GaussianCalibration.gaussianEpsilon(0, 1e-5)).isInfinite();
  }

  @Test
  void badParameters_areRefusedByName() {
    assertThatThrownBy(() -> GaussianCalibration.analyticSigma(Double.NaN, 1e-5, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("epsilon must be > 0 and finite, was NaN");
    assertThatThrownBy(() -> GaussianCalibration.analyticSigma(1, 0, 1))
        .hasMessage("delta must be in (0, 1), was 0.0");
    assertThatThrownBy(() -> GaussianCalibration.analyticSigma(1, 1e-5, -1))
        .hasMessage("sensitivity must be > 0 and finite, was -1.0");
  }
}
