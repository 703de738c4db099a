package dev.privagg.correlated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BandedToeplitzTest {

  // jax_privacy tests/matrix_factorization/banded_test.py test_implicit_error: one band (C = I) on
  // 9 rounds has mean per-query error 5.0 (the mean of 1..9).
  @Test
  void oneBand_isIdentity_meanErrorOfNineRoundsIsFive() {
    assertThat(BandedToeplitz.identity().loss(9, ErrorKind.MEAN)).isCloseTo(5.0, within(1e-12));
    assertThat(BandedToeplitz.identity().loss(9, ErrorKind.MAX)).isEqualTo(9.0);
    assertThat(BandedToeplitz.identity().buffers()).isZero();
  }

  // jax_privacy tests/matrix_factorization/toeplitz_test.py test_mean_loss: coefficients
  // [1, .4, .3, .1] for n = 1..8, loss = sensitivity^2 * mean per-query error, scale invariant.
  // The reference here is dense: C materialized, A C^-1 by forward substitution, row norms.
  @Test
  void loss_matchesDenseMatrices_andIsScaleInvariant() {
    double[] coef = {1.0, 0.4, 0.3, 0.1};
    for (int n = 1; n <= 8; n++) {
      double[] rows = squaredRowNorms(denseWorkloadTimesInverse(coef, n, 0));
      double mean = Arrays.stream(rows).average().orElseThrow();
      double max = Arrays.stream(rows).max().orElseThrow();
      double sens = Toeplitz.sensitivitySquared(coef, n);
      double[] scaled = {2.3, 0.92, 0.69, 0.23};
      assertThat(BandedToeplitz.lossAndGradient(coef, n, ErrorKind.MEAN, null))
          .as("n=%d", n)
          .isCloseTo(sens * mean, within(1e-12 * sens * mean));
      assertThat(BandedToeplitz.lossAndGradient(scaled, n, ErrorKind.MEAN, null))
          .isCloseTo(sens * mean, within(1e-12 * sens * mean));
      assertThat(BandedToeplitz.lossAndGradient(coef, n, ErrorKind.MAX, null))
          .isCloseTo(sens * max, within(1e-12 * sens * max));
    }
  }

  // The server's momentum changes the workload: A is jax_privacy's momentum_sgd_matrix, dense.
  @Test
  void lossUnderMomentum_matchesTheDenseMomentumWorkload_andExceedsThePrefixSums() {
    double[] coef = {1.0, 0.4, 0.3, 0.1};
    for (double beta : new double[] {0.5, 0.9}) {
      Workload workload = new Workload(beta);
      for (int n : new int[] {1, 2, 7, 30}) {
        double[] rows = squaredRowNorms(denseWorkloadTimesInverse(coef, n, beta));
        double mean = Arrays.stream(rows).average().orElseThrow();
        double last = rows[n - 1];
        double sens = Toeplitz.sensitivitySquared(coef, n);
        double loss = BandedToeplitz.lossAndGradient(coef, n, ErrorKind.MEAN, workload, null);
        assertThat(loss)
            .as("beta=%s n=%d", beta, n)
            .isCloseTo(sens * mean, within(1e-12 * sens * mean));
        assertThat(BandedToeplitz.lossAndGradient(coef, n, ErrorKind.MAX, workload, null))
            .isCloseTo(sens * last, within(1e-12 * sens * last));
        if (n > 1) {
          assertThat(loss)
              .isGreaterThan(BandedToeplitz.lossAndGradient(coef, n, ErrorKind.MEAN, null));
        }
      }
    }
  }

  // A restore compares the strategy bit for bit: the coefficients an operator pins from what the
  // state records must give the same C. Scaling unit-norm coefficients again moved the last bit
  // of 5 of these 107 optimized strategies.
  @Test
  void unitNormCoefficients_areKeptBitForBit() {
    for (int n : new int[] {50, 300, 1000}) {
      for (int b = 2; b <= 40; b++) {
        BandedToeplitz once = BandedOptimizer.optimize(n, b, ErrorKind.MEAN);
        assertThat(BandedToeplitz.of(once.coefficients())).as("n=%d b=%d", n, b).isEqualTo(once);
      }
    }
    double[] scaled = BandedToeplitz.of(new double[] {3, 1}).coefficients();
    assertThat(scaled[0] * scaled[0] + scaled[1] * scaled[1]).isCloseTo(1, within(1e-15));
  }

  @Test
  void gradient_matchesCentralDifferences() {
    double[] c = {1.0, 0.55, 0.3, 0.21, 0.1};
    for (ErrorKind kind : ErrorKind.values()) {
      for (int n : new int[] {3, 5, 40}) {
        gradientMatchesCentralDifferences(c, n, kind, Workload.PREFIX_SUMS);
        gradientMatchesCentralDifferences(c, n, kind, new Workload(0.9));
      }
    }
  }

  private static void gradientMatchesCentralDifferences(
      double[] c, int n, ErrorKind kind, Workload workload) {
    double[] g = new double[c.length];
    BandedToeplitz.lossAndGradient(c, n, kind, workload, g);
    for (int i = 0; i < c.length; i++) {
      double h = 1e-6;
      double[] plus = c.clone();
      double[] minus = c.clone();
      plus[i] += h;
      minus[i] -= h;
      double numeric =
          (BandedToeplitz.lossAndGradient(plus, n, kind, workload, null)
                  - BandedToeplitz.lossAndGradient(minus, n, kind, workload, null))
              / (2 * h);
      assertThat(g[i])
          .as("%s %s n=%d i=%d", kind, workload, n, i)
          .isCloseTo(numeric, within(1e-5 * Math.max(1, Math.abs(numeric))));
    }
  }

  @Test
  void correlate_streamsTheInverse_roundByRound() {
    BandedToeplitz c = BandedToeplitz.of(new double[] {1.0, 0.6, 0.35, 0.2});
    int n = 30;
    int dims = 5;
    SplittableRandom random = new SplittableRandom(3);
    double[][] z = new double[n][dims];
    for (double[] row : z) {
      for (int i = 0; i < dims; i++) {
        row[i] = random.nextGaussian();
      }
    }
    double[] inverse = c.noisingCoefficients(n);
    double[][] buffers = new double[c.buffers()][dims];
    for (int t = 0; t < n; t++) {
      double[] values = z[t].clone();
      c.correlate(buffers, values);
      for (int i = 0; i < dims; i++) {
        double expected = 0;
        for (int s = 0; s <= t; s++) {
          expected += inverse[t - s] * z[s][i];
        }
        assertThat(values[i]).as("round %d coordinate %d", t, i).isCloseTo(expected, within(1e-9));
      }
      assertThat(buffers[0]).containsExactly(values);
    }
  }

  @Test
  void coefficients_areUnitNorm_positiveLead() {
    BandedToeplitz c = BandedToeplitz.of(new double[] {-2, -1});
    assertThat(c.coefficients()[0]).isCloseTo(2 / Math.sqrt(5), within(1e-15));
    assertThat(c.coefficients()[1]).isCloseTo(1 / Math.sqrt(5), within(1e-15));
    assertThat(c.bands()).isEqualTo(2);
  }

  // The review's case: subnormal coefficients squared lose precision; scaled first, the norm is 1.
  @Test
  void tinyOrHugeCoefficients_stillNormalizeToOne() {
    for (double scale : new double[] {2.71e-162, 1e-310, 1e300}) {
      double[] c = BandedToeplitz.of(new double[] {scale, scale, 0.5 * scale}).coefficients();
      assertThat(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).isCloseTo(1, within(1e-15));
      assertThat(c[0]).isCloseTo(2.0 / 3, within(1e-12)); // the subnormal input holds fewer digits
    }
  }

  @Test
  void badCoefficients_refusedWithReason() {
    assertThatThrownBy(() -> BandedToeplitz.of(new double[0])).hasMessageContaining("1 to 1024");
    assertThatThrownBy(() -> BandedToeplitz.of(new double[] {0, 1}))
        .hasMessageContaining("first coefficient must be non-zero");
    assertThatThrownBy(() -> BandedToeplitz.of(new double[] {1, Double.NaN}))
        .hasMessageContaining("coefficient 1 must be finite");
    assertThatThrownBy(() -> BandedToeplitz.of(new double[1025])).hasMessageContaining("1 to 1024");
    BandedToeplitz c = BandedToeplitz.of(new double[] {1, 0.5});
    assertThatThrownBy(() -> c.correlate(new double[0][], new double[3]))
        .hasMessageContaining("keeps 1 buffers");
  }

  /** A C^-1 for the n x n prefix-sum A and C with the given first column, dense. */
  private static double[] squaredRowNorms(double[][] matrix) {
    return Arrays.stream(matrix)
        .mapToDouble(row -> Arrays.stream(row).map(v -> v * v).sum())
        .toArray();
  }

  /**
   * A C^-1 with A the models of server SGD with heavy-ball momentum beta, built as jax_privacy's
   * {@code momentum_sgd_matrix} docstring defines it: run the optimizer on each unit gradient
   * sequence and read off the iterates (beta = 0: the prefix sums).
   */
  private static double[][] denseWorkloadTimesInverse(double[] coef, int n, double beta) {
    double[][] inverse = new double[n][n];
    for (int col = 0; col < n; col++) {
      // Column col of C^-1: solve C x = e_col by forward substitution.
      for (int row = 0; row < n; row++) {
        double rhs = row == col ? 1 : 0;
        for (int j = 0; j < row; j++) {
          int d = row - j;
          if (d < coef.length) {
            rhs -= coef[d] * inverse[j][col];
          }
        }
        inverse[row][col] = rhs / coef[0];
      }
    }
    double[][] a = new double[n][n];
    for (int s = 0; s < n; s++) {
      double buffer = 0;
      double theta = 0;
      for (int t = 0; t < n; t++) {
        buffer = beta * buffer + (t == s ? 1 : 0);
        theta += buffer;
        a[t][s] = theta;
      }
    }
    double[][] b = new double[n][n];
    for (int t = 0; t < n; t++) {
      for (int j = 0; j < n; j++) {
        double sum = 0;
        for (int s = 0; s <= t; s++) {
          sum += a[t][s] * inverse[s][j];
        }
        b[t][j] = sum;
      }
    }
    return b;
  }
}
