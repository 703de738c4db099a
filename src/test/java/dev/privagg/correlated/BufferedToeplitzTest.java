package dev.privagg.correlated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Random;
import org.junit.jupiter.api.Test;

class BufferedToeplitzTest {

  // jax_privacy buffered_toeplitz_test.py test_build_and_str: canonical order is theta decreasing.
  @Test
  void of_sortsThetaDecreasingWithTheirOmegas() {
    BufferedToeplitz blt = BufferedToeplitz.of(new double[] {0.5, 0.9}, new double[] {0.6, 0.1});
    assertThat(blt.theta()).containsExactly(0.9, 0.5);
    assertThat(blt.omega()).containsExactly(0.1, 0.6);
    assertThat(blt.buffers()).isEqualTo(2);
  }

  // jax_privacy buffered_toeplitz_test.py docstring of BufferedToeplitz: t_i = sum_j s_j d_j^(i-1).
  @Test
  void toeplitzCoefficients_followTheDefinition() {
    BufferedToeplitz blt = BufferedToeplitz.of(new double[] {0.9, 0.5}, new double[] {0.1, 0.6});
    double[] c = blt.toeplitzCoefficients(5);
    assertThat(c[0]).isEqualTo(1.0);
    for (int i = 1; i < 5; i++) {
      assertThat(c[i])
          .isCloseTo(0.1 * Math.pow(0.9, i - 1) + 0.6 * Math.pow(0.5, i - 1), within(1e-15));
    }
    // jax_privacy test_materialize: buf_decay [0], output_scale [-1] gives [1, -1, 0, ...].
    assertThat(BufferedToeplitz.of(new double[] {0.0}, new double[] {-1.0}).toeplitzCoefficients(4))
        .containsExactly(1, -1, 0, 0);
  }

  @Test
  void identity_hasNoBuffersAndIsItsOwnInverse() {
    BufferedToeplitz id = BufferedToeplitz.of(new double[0], new double[0]);
    assertThat(id.toeplitzCoefficients(3)).containsExactly(1, 0, 0);
    assertThat(id.inverse()).isEqualTo(id);
  }

  // jax_privacy buffered_toeplitz_test.py test_get_inverse_parameters_and_blt_pair on BLT_TUPLES
  // (skipping gaps < 1e-8 as it does): C^-1 coefficients, inverse of inverse, C^-1 C = I, pair.
  @Test
  void inverse_roundTripsOnBltTuples() {
    int checked = 0;
    for (BufferedToeplitz blt : BltTuples.accepted()) {
      if (BltTuples.minGap(blt) <= 1e-8) {
        continue;
      }
      checked++;
      BufferedToeplitz inv = blt.inverse();
      double[] expected = Toeplitz.inverseCoefficients(blt.toeplitzCoefficients(25), 25);
      double[] actual = inv.toeplitzCoefficients(25);
      for (int i = 0; i < 25; i++) {
        assertThat(actual[i]).as("%s coef %d", blt, i).isCloseTo(expected[i], within(1e-7));
      }
      BufferedToeplitz back = inv.inverse();
      assertClose(back.theta(), blt.theta(), 1e-7);
      assertClose(back.omega(), blt.omega(), 1e-7);
      double[] product =
          Toeplitz.multiply(inv.toeplitzCoefficients(7), blt.toeplitzCoefficients(7), 7);
      assertClose(product, new double[] {1, 0, 0, 0, 0, 0, 0}, 1e-7);

      BufferedToeplitz[] pair = BufferedToeplitz.pairFromThetas(blt.theta(), inv.theta());
      assertClose(pair[0].theta(), blt.theta(), 1e-7);
      assertClose(pair[0].omega(), blt.omega(), 1e-7);
      assertClose(pair[1].theta(), inv.theta(), 1e-7);
      assertClose(pair[1].omega(), inv.omega(), 1e-7);
    }
    assertThat(checked).isGreaterThanOrEqualTo(25);
  }

  // McMahan and Pillutla 2025, Thm 1: theta in (0,1), omega > 0 and score < 1 give thetaHat in
  // (0, 1) interlacing theta, and omegaHat < 0.
  @Test
  void inverse_ofValidBlt_interlacesAndHasNegativeOmegas() {
    BufferedToeplitz blt =
        BufferedToeplitz.of(new double[] {0.99, 0.9, 0.5}, new double[] {0.05, 0.1, 0.2});
    assertThat(blt.pillutlaScore()).isCloseTo(0.05 / 0.99 + 0.1 / 0.9 + 0.2 / 0.5, within(1e-15));
    BufferedToeplitz inv = blt.inverse();
    double[] t = blt.theta();
    double[] h = inv.theta();
    assertThat(h[0]).isBetween(t[1], t[0]);
    assertThat(h[1]).isBetween(t[2], t[1]);
    assertThat(h[2]).isBetween(0.0, t[2]);
    for (double w : inv.omega()) {
      assertThat(w).isNegative();
    }
  }

  @Test
  void inverse_withComplexRoots_isRefused() {
    // 1 + 1/(z - 0.9) - 1/(z - 0.1) = 0 has roots z = 0.5 +- 0.6i.
    BufferedToeplitz blt = BufferedToeplitz.of(new double[] {0.9, 0.1}, new double[] {1.0, -1.0});
    assertThatThrownBy(blt::inverse)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("inverse thetas must be real, found the complex root 0.5");
  }

  // McMahan, Xu and Zhang 2024, Alg. 3 equals multiplying by the materialized C^-1.
  @Test
  void correlate_equalsMultiplyingByTheInverseToeplitzMatrix() {
    BufferedToeplitz c =
        BufferedToeplitz.of(new double[] {0.98, 0.7, 0.2}, new double[] {0.05, 0.2, 0.3});
    int n = 40;
    int d = 3;
    Random random = new Random(7);
    double[][] z = new double[n][d];
    for (double[] row : z) {
      for (int i = 0; i < d; i++) {
        row[i] = random.nextGaussian();
      }
    }
    double[] inv = Toeplitz.inverseCoefficients(c.toeplitzCoefficients(n), n);
    double[][] buffers = new double[3][d];
    for (int t = 0; t < n; t++) {
      double[] values = z[t].clone();
      BufferedToeplitz.correlate(c, buffers, values);
      for (int i = 0; i < d; i++) {
        double expected = 0;
        for (int s = 0; s <= t; s++) {
          expected += inv[t - s] * z[s][i];
        }
        assertThat(values[i]).isCloseTo(expected, within(1e-12));
      }
    }
  }

  @Test
  void correlate_refusesBuffersOfTheWrongShape() {
    BufferedToeplitz c = BufferedToeplitz.of(new double[] {0.9}, new double[] {0.1});
    assertThatThrownBy(() -> BufferedToeplitz.correlate(c, new double[2][3], new double[3]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("buffers must hold 1 arrays (one per buffer), was 2");
    assertThatThrownBy(() -> BufferedToeplitz.correlate(c, new double[1][2], new double[3]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("buffers[0] must have length 3 (as values), was 2");
  }

  @Test
  void of_refusesBadParameters() {
    assertThatThrownBy(() -> BufferedToeplitz.of(new double[] {0.9, 0.5}, new double[] {0.1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("theta and omega must have the same length, was 2 and 1");
    assertThatThrownBy(() -> BufferedToeplitz.of(new double[9], new double[9]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("buffers must be <= 8, was 9");
    assertThatThrownBy(
            () -> BufferedToeplitz.of(new double[] {0.9, Double.NaN}, new double[] {0.1, 0.1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("theta[1] must be finite, was NaN");
    assertThatThrownBy(
            () -> BufferedToeplitz.of(new double[] {0.9}, new double[] {Double.POSITIVE_INFINITY}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("omega[0] must be finite, was Infinity");
    assertThatThrownBy(
            () -> BufferedToeplitz.of(new double[] {0.5, 0.5 + 1e-12}, new double[] {0.1, 0.1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "theta values must differ pairwise by >= 1.0E-9, was 0.500000000001");
  }

  @Test
  void requireValidForMechanism_namesTheBrokenCondition() {
    BufferedToeplitz.of(new double[] {0.99, 0.5}, new double[] {0.1, 0.3})
        .requireValidForMechanism();
    assertThatThrownBy(
            () ->
                BufferedToeplitz.of(new double[] {1.2, 0.5}, new double[] {0.1, 0.1})
                    .requireValidForMechanism())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("theta[0] must be in (0, 1), was 1.2");
    assertThatThrownBy(
            () ->
                BufferedToeplitz.of(new double[] {0.9, 0.0}, new double[] {0.1, 0.1})
                    .requireValidForMechanism())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("theta[1] must be in (0, 1), was 0.0");
    assertThatThrownBy(
            () ->
                BufferedToeplitz.of(new double[] {0.9, 0.5}, new double[] {0.1, -0.1})
                    .requireValidForMechanism())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("omega[1] must be > 0, was -0.1");
    assertThatThrownBy(
            () ->
                BufferedToeplitz.of(new double[] {0.9, 0.5}, new double[] {0.5, 0.75})
                    .requireValidForMechanism())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sum(omega) must be <= 1 (non-increasing coefficients), was 1.25");
  }

  static void assertClose(double[] actual, double[] expected, double tolerance) {
    assertThat(actual).hasSameSizeAs(expected);
    for (int i = 0; i < expected.length; i++) {
      assertThat(actual[i])
          .as("index %d", i)
          .isCloseTo(expected[i], within(tolerance + tolerance * Math.abs(expected[i])));
    }
  }
}
