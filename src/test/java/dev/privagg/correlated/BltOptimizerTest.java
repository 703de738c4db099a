package dev.privagg.correlated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class BltOptimizerTest {
  /** Hard-coded BLTs of jax_privacy test_optimize_better_than_baseline (n=1000, k=2, b=5). */
  private static final BufferedToeplitz[] BASELINE = {
    BufferedToeplitz.of(new double[] {0.9877027559462715}, new double[] {0.10595704738115597}),
    BufferedToeplitz.of(
        new double[] {0.993433070819512, 0.6342644427247973},
        new double[] {0.07538320617916519, 0.5144060910151949}),
    BufferedToeplitz.of(
        new double[] {0.9934331427558322, 0.6342832547407998, 0.6342732636848848},
        new double[] {0.07538346317367392, 0.4808525558278832, 0.0335536865929295})
  };

  /** jax_privacy buffered_toeplitz_test.py brute_force_max_loss: min-sep sens^2 * max error. */
  static double bruteForceMaxLoss(BufferedToeplitz c, int n, int b, int k) {
    double[] coef = c.toeplitzCoefficients(n);
    return Toeplitz.minSepSensitivitySquared(coef, n, b, k)
        * Toeplitz.maxError(Toeplitz.inverseCoefficients(coef, n), n);
  }

  // jax_privacy buffered_toeplitz_test.py test_optimize_single_participation_golden: n = 1e5,
  // 2 buffers, max error; parameters at rtol 1e-5 (ours agree to about 5e-7).
  @Test
  void singleParticipation_reproducesTheGoldenBlt() {
    BufferedToeplitz c =
        BltOptimizer.optimize(ParticipationSchema.single(100_000), 2, ErrorKind.MAX);
    BufferedToeplitzTest.assertClose(c.omega(), new double[] {0.0122853238, 0.1878393665}, 1e-6);
    BufferedToeplitzTest.assertClose(c.theta(), new double[] {0.9999528892, 0.9857068667}, 1e-7);
    BufferedToeplitz golden =
        BufferedToeplitz.of(
            new double[] {0.9999528892, 0.9857068667}, new double[] {0.0122853238, 0.1878393665});
    assertThat(BltLoss.maxLoss(c, 100_000))
        .isLessThanOrEqualTo(BltLoss.maxLoss(golden, 100_000) * (1 + 1e-6));
  }

  // jax_privacy buffered_toeplitz_test.py test_optimize_better_than_baseline: at n = 500, for
  // k in 2..12 and b in 5..100, loss <= 1.001 x the baseline's (a few combinations).
  @Test
  void minSep_isBetterThanTheBaselineOptimizedForOtherParameters() {
    int[][] kb = {{2, 5}, {12, 100}, {7, 40}, {2, 100}, {12, 5}};
    for (int buffers = 1; buffers <= 3; buffers++) {
      for (int[] p : kb) {
        ParticipationSchema schema = new ParticipationSchema(500, p[1], p[0]);
        BufferedToeplitz c = BltOptimizer.optimize(schema, buffers, ErrorKind.MAX);
        assertThat(bruteForceMaxLoss(c, 500, p[1], p[0]))
            .as("buffers=%d k=%d b=%d", buffers, p[0], p[1])
            .isLessThanOrEqualTo(1.001 * bruteForceMaxLoss(BASELINE[buffers - 1], 500, p[1], p[0]));
      }
    }
  }

  // The baseline's own setting (n = 1000, k = 2, b = 5): its loss (63.73 with 1 buffer, 48.48
  // with 2) is not reproduced: this optimizer finds lower losses (47.20 and 36.05), confirmed by a
  // dense computation, so the baseline is not optimal for today's loss; only <= is asserted.
  @Test
  void minSep_atTheBaselineSetting_isNoWorseThanTheBaseline() {
    ParticipationSchema schema = new ParticipationSchema(1000, 5, 2);
    double[] expected = {47.19597544, 36.05329442};
    for (int buffers = 1; buffers <= 2; buffers++) {
      BufferedToeplitz c = BltOptimizer.optimize(schema, buffers, ErrorKind.MAX);
      double loss = bruteForceMaxLoss(c, 1000, 5, 2);
      assertThat(loss).isLessThanOrEqualTo(bruteForceMaxLoss(BASELINE[buffers - 1], 1000, 5, 2));
      assertThat(loss).isCloseTo(expected[buffers - 1], within(1e-6 * expected[buffers - 1]));
    }
  }

  // jax_privacy buffered_toeplitz_test.py test_optimize_single_participation_near_optimal: every
  // row of its table, n = 10 .. 1e8: sqrt(max loss) / (1 + ln(n) / pi) below the row's rtol.
  @Test
  void singleParticipation_isNearTheOptimalToeplitzBound() {
    long[][] rows = {
      {10, 1},
      {100, 2},
      {100, 3},
      {1000, 2},
      {1000, 3},
      {10000, 1},
      {10000, 3},
      {10000, 4},
      {100000, 2},
      {100000, 4},
      {1000000, 5},
      {10000000, 2},
      {10000000, 4},
      {10000000, 6},
      {10000000, 8},
      {100000000, 2},
      {100000000, 7}
    };
    double[] rtol = {
      1.04, 1.03, 1.03, 1.04, 1.03, 1.45, 1.03, 1.03, 1.16, 1.03, 1.05, 1.40, 1.05, 1.06, 1.10,
      1.60, 1.05
    };
    for (int i = 0; i < rows.length; i++) {
      long n = rows[i][0];
      BufferedToeplitz c =
          BltOptimizer.optimize(ParticipationSchema.single(n), (int) rows[i][1], ErrorKind.MAX);
      double ratio = Math.sqrt(BltLoss.maxLoss(c, n)) / (1 + Math.log(n) / Math.PI);
      assertThat(ratio).as("n=%d buffers=%d", n, rows[i][1]).isLessThan(rtol[i]);
    }
  }

  // The optimum is a local minimum of the loss: nudging any theta of C or C^-1 does not help.
  @Test
  void optimum_isALocalMinimumOfTheLoss() {
    ParticipationSchema schema = new ParticipationSchema(300, 10, 3);
    for (ErrorKind kind : ErrorKind.values()) {
      BufferedToeplitz c = BltOptimizer.optimize(schema, 2, kind);
      BltOptimizer.Objective objective = new BltOptimizer.Objective(schema, kind);
      double[] theta = c.theta();
      double[] thetaHat = c.inverse().theta();
      double[] x = new double[4];
      for (int j = 0; j < 2; j++) {
        x[j] = BltOptimizer.logit(theta[j]);
        x[2 + j] = BltOptimizer.logit(thetaHat[j]);
      }
      double best = objective.penalized(x);
      for (int i = 0; i < 4; i++) {
        for (double step : new double[] {-1e-3, 1e-3}) {
          double[] y = x.clone();
          y[i] += step;
          double value = objective.penalized(y);
          if (Double.isFinite(value)) {
            assertThat(value).as("%s x[%d] %+f", kind, i, step).isGreaterThanOrEqualTo(best);
          }
        }
      }
    }
  }

  // jax_privacy buffered_toeplitz_test.py test_from_rational_approx_to_sqrt_x: the first 10
  // coefficients approximate binomial(2k, k) / 4^k within the table's rtol per number of buffers.
  @Test
  void rationalApproxToSqrt_approximatesTheOptimalCoefficients() {
    double[] rtols = {1.10, 0.41, 0.25, 0.25, 0.15, 0.15, 0.09, 0.09};
    double[] optimal = Toeplitz.optimalMaxErrorStrategyCoefficients(10);
    for (int m = 1; m <= 8; m++) {
      double[] c =
          BltOptimizer.rationalApproxToSqrt(m, 1.0, Double.POSITIVE_INFINITY)
              .toeplitzCoefficients(10);
      for (int i = 0; i < 10; i++) {
        assertThat(c[i])
            .as("m=%d i=%d", m, i)
            .isCloseTo(optimal[i], within(rtols[m - 1] * optimal[i]));
      }
    }
  }

  @Test
  void optimize_refusesBadBuffers() {
    assertThatThrownBy(
            () -> BltOptimizer.optimize(ParticipationSchema.single(10), 9, ErrorKind.MAX))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("buffers must be in [0, 8], was 9");
    assertThat(BltOptimizer.optimize(ParticipationSchema.single(10), 0, ErrorKind.MAX))
        .isEqualTo(BufferedToeplitz.identity());
  }
}
