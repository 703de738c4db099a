package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.apache.commons.statistics.distribution.NormalDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClosedFormNullTest {
  private static final ClosedFormNull DIM_999 = new ClosedFormNull(999);
  private static final NormalDistribution GAUSSIAN_999 =
      NormalDistribution.of(0, Math.pow(999, -0.5));

  // google-research/federated one_shot_epe/empirical_privacy_estimation_test.py
  // test_closed_form_null_calculator, as written: np.arange(-0.3, 0.3, 100) is the single point
  // -0.3 and np.arange(0.01, 0.99, 100) the single point 0.01; pdf and cdf with rtol and atol
  // 1e-6, ppf with rtol 1e-3.
  @Test
  void dim999_matchesTheGaussian_atTheReferencesPoints() {
    assertThat(DIM_999.pdf(-0.3))
        .isCloseTo(GAUSSIAN_999.density(-0.3), within(1e-6 + 1e-6 * GAUSSIAN_999.density(-0.3)));
    assertThat(DIM_999.cdf(-0.3))
        .isCloseTo(
            GAUSSIAN_999.cumulativeProbability(-0.3),
            within(1e-6 + 1e-6 * GAUSSIAN_999.cumulativeProbability(-0.3)));
    double gaussianPpf = GAUSSIAN_999.inverseCumulativeProbability(0.01);
    assertThat(DIM_999.ppf(0.01)).isCloseTo(gaussianPpf, within(1e-3 * Math.abs(gaussianPpf)));
  }

  // The same comparison on a grid, where the approximation is visible: the exact law has a
  // normalization sqrt((dim - 1.5) / dim) smaller near 0 and lighter tails. Measured with the
  // reference at numpy 2.4.6 / scipy 1.17.1: pdf differs by at most 0.0095 (peak 12.6), cdf by
  // 1.35e-4, ppf on [0.01, 0.99] by 4.5e-5 (scale 0.0316); tolerances are about twice those.
  @Test
  void dim999_isCloseToTheGaussian_onAGrid() {
    for (int i = 0; i <= 60; i++) {
      double t = -0.3 + 0.01 * i;
      assertThat(DIM_999.pdf(t)).isCloseTo(GAUSSIAN_999.density(t), within(0.02));
      assertThat(DIM_999.cdf(t)).isCloseTo(GAUSSIAN_999.cumulativeProbability(t), within(3e-4));
    }
    for (int i = 1; i < 100; i++) {
      double p = 0.01 * i;
      assertThat(DIM_999.ppf(p))
          .isCloseTo(GAUSSIAN_999.inverseCumulativeProbability(p), within(1e-4));
    }
  }

  // The CDF is the regularized incomplete beta function; numerical integration of the density (the
  // reference's way) agrees to 1e-10 relative, in the far lower tail too.
  @ParameterizedTest
  @CsvSource({
    "3, -0.7",
    "3, 0.4",
    "5, -0.9",
    "5, 0.2",
    "10, -0.95",
    "10, -0.3",
    "10, 0.6",
    "200, -0.4",
    "200, -0.1",
    "200, 0.05",
    "999, -0.2",
    "999, -0.05",
    "999, 0.03"
  })
  void cdf_isTheIntegralOfThePdf(int dim, double t) {
    ClosedFormNull nul = new ClosedFormNull(dim);
    // Panels graded towards -1, where the density's derivatives of order > dim/2 - 1.5 blow up.
    double[] cuts = new double[200 + 60];
    int n = 0;
    for (int j = 60; j >= 1; j--) {
      cuts[n++] = -1 + (t + 1) * Math.scalb(1.0, -j) / 2;
    }
    for (int k = 0; k <= 199; k++) {
      cuts[n++] = -1 + (t + 1) * (0.5 + 0.5 * k / 199.0);
    }
    cuts = java.util.Arrays.copyOf(cuts, n);
    java.util.Arrays.sort(cuts);
    double integral =
        Quadrature.gaussLegendre(nul::pdf, -1, cuts[0]) + Quadrature.overPanels(nul::pdf, cuts);
    assertThat(nul.cdf(t)).isCloseTo(integral, within(1e-10 * integral));
  }

  @Test
  void pdf_integratesToOne_andDim3IsUniform() {
    for (int dim : new int[] {3, 4, 10, 200, 999}) {
      ClosedFormNull nul = new ClosedFormNull(dim);
      double[] cuts = new double[401];
      for (int k = 0; k <= 400; k++) {
        cuts[k] = -1 + 2.0 * k / 400;
      }
      assertThat(Quadrature.overPanels(nul::pdf, cuts)).isCloseTo(1, within(1e-6));
    }
    ClosedFormNull uniform = new ClosedFormNull(3);
    assertThat(uniform.pdf(-1)).isCloseTo(0.5, within(1e-15));
    assertThat(uniform.pdf(0.3)).isCloseTo(0.5, within(1e-15));
    assertThat(uniform.cdf(0.3)).isCloseTo(0.65, within(1e-15));
    assertThat(uniform.pdf(1.2)).isZero();
  }

  @Test
  void ppf_invertsCdf() {
    ClosedFormNull nul = new ClosedFormNull(200);
    for (double p : new double[] {1e-12, 1e-5, 0.01, 0.3, 0.5, 0.9, 0.999}) {
      assertThat(nul.cdf(nul.ppf(p))).isCloseTo(p, within(1e-12 * p));
    }
    assertThat(nul.ppf(0)).isEqualTo(-1);
    assertThat(nul.ppf(1)).isEqualTo(1);
  }

  // The log CDF switches to a series where the CDF underflows; both agree where both work, and the
  // series stays finite and increasing beyond.
  @Test
  void logCdf_seriesMatchesLogOfCdf_andExtendsPastUnderflow() {
    for (double t : new double[] {-0.6, -0.5, -0.4}) {
      double x = 0.5 * (1 + t);
      assertThat(DIM_999.logLowerTailSeries(x))
          .isCloseTo(Math.log(DIM_999.cdf(t)), within(1e-12 * Math.abs(Math.log(DIM_999.cdf(t)))));
    }
    assertThat(DIM_999.cdf(-0.95)).isZero();
    double previous = Double.NEGATIVE_INFINITY;
    for (double t : new double[] {-0.99, -0.95, -0.9, -0.8, -0.7}) {
      double logCdf = DIM_999.logCdf(t);
      assertThat(logCdf).isFinite().isGreaterThan(previous);
      previous = logCdf;
    }
  }

  @Test
  void invalidArguments_areRefusedByName() {
    assertThatThrownBy(() -> new ClosedFormNull(1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dim must be >= 2 (a cosine in one dimension is always +-1), was 1");
    assertThatThrownBy(() -> DIM_999.ppf(1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("p must be in [0, 1], was 1.5");
    assertThatThrownBy(() -> DIM_999.cdf(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("t must not be NaN");
  }
}
