package dev.privagg.correlated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ToeplitzTest {

  // jax_privacy toeplitz_test.py test_fhu_coefs: binomial(2k, k) / 4^k squares to the prefix sum.
  @Test
  void optimalMaxErrorStrategy_squaresToThePrefixSumMatrix() {
    double[] c = Toeplitz.optimalMaxErrorStrategyCoefficients(100);
    assertThat(c[0]).isEqualTo(1.0);
    assertThat(c[1]).isEqualTo(0.5);
    assertThat(c[2]).isEqualTo(0.375);
    assertThat(c[3]).isEqualTo(0.3125);
    assertThat(c[4]).isEqualTo(35.0 / 128);
    double[] square = Toeplitz.multiply(c, c, 100);
    for (double v : square) {
      assertThat(v).isCloseTo(1.0, within(1e-12));
    }
  }

  // jax_privacy toeplitz_test.py test_fhu_inv_coefs and
  // test_banded_inverse_square_root_noising_coefs:
  // [1, -1/2, -1/8, -1/16, -5/128], and C C^-1 = I.
  @Test
  void optimalMaxErrorNoising_isTheInverse() {
    double[] inv = Toeplitz.optimalMaxErrorNoisingCoefficients(100);
    assertThat(inv).startsWith(1.0, -0.5, -0.125, -0.0625, -5.0 / 128);
    double[] product =
        Toeplitz.multiply(Toeplitz.optimalMaxErrorStrategyCoefficients(100), inv, 100);
    assertThat(product[0]).isCloseTo(1.0, within(1e-12));
    for (int i = 1; i < 100; i++) {
      assertThat(product[i]).isCloseTo(0.0, within(1e-12));
    }
  }

  // jax_privacy toeplitz_test.py test_sensitivity_squared_identity: identity gives min(n, k).
  @Test
  void minSep_identity_isTheNumberOfParticipations() {
    for (int n : new int[] {1, 2, 3, 5, 11}) {
      for (int k : new int[] {1, 4, 11}) {
        assertThat(Toeplitz.minSepSensitivitySquared(new double[] {1.0}, n, 1, k))
            .isEqualTo(Math.min(n, k));
      }
    }
  }

  // jax_privacy toeplitz_test.py test_sensitivity_squared_tri: all-ones coefficients, b = 1:
  // the squared norm of the sum of the first k columns of tri(n).
  @Test
  void minSep_lowerTriangleOfOnes_isTheNormOfTheFirstKColumns() {
    for (int n : new int[] {1, 2, 3, 5, 11}) {
      for (int k : new int[] {1, 4, 11}) {
        double expected = 0;
        for (int i = 0; i < n; i++) {
          double row = Math.min(i + 1, k);
          expected += row * row;
        }
        double[] ones = new double[n];
        java.util.Arrays.fill(ones, 1.0);
        assertThat(Toeplitz.minSepSensitivitySquared(ones, n, 1, k)).isEqualTo(expected);
      }
    }
  }

  // jax_privacy toeplitz_test.py test_sensitivity_squared_min_sep_one: sqrt(linspace(1, 0.001, n)),
  // b = 1: the squared norm of the sum of the first k columns, rtol 1e-10.
  @Test
  void minSep_separationOne_isTheFirstKColumns() {
    for (int n : new int[] {1, 5, 50}) {
      double[] c = new double[n];
      for (int i = 0; i < n; i++) {
        c[i] = Math.sqrt(n == 1 ? 1.0 : 1.0 + (0.001 - 1.0) * i / (n - 1));
      }
      for (int k : new int[] {1, 2, 5, 50}) {
        double expected = 0;
        for (int i = 0; i < n; i++) {
          double row = 0;
          for (int j = 0; j < Math.min(k, n); j++) {
            row += i >= j ? c[i - j] : 0;
          }
          expected += row * row;
        }
        assertThat(Toeplitz.minSepSensitivitySquared(c, n, 1, k))
            .isCloseTo(expected, within(1e-10 * expected));
      }
    }
  }

  // jax_privacy toeplitz_test.py test_sensitivity_squared_fixed_epoch: for positive decreasing
  // coefficients the worst case is participation every n / epochs rounds (brute force over
  // patterns here, on the same linspace(1, 0.001, bands) coefficients).
  @Test
  void minSep_decreasingCoefficients_matchesTheWorstPatternByBruteForce() {
    int[][] cases = {{10, 5}, {10, 2}, {10, 10}, {2, 2}};
    for (int[] nc : cases) {
      int n = nc[0];
      int epochs = nc[1];
      int b = n / epochs;
      for (int bands : new int[] {2, 10, 11, 13}) {
        double[] c = new double[bands];
        for (int i = 0; i < bands; i++) {
          c[i] = 1.0 + (0.001 - 1.0) * i / (bands - 1);
        }
        double brute = bruteForceMinSep(c, n, b, epochs);
        for (Integer k : new Integer[] {epochs, epochs + 10}) {
          assertThat(Toeplitz.minSepSensitivitySquared(c, n, b, k))
              .isCloseTo(brute, within(1e-9 * brute));
        }
      }
    }
  }

  // jax_privacy toeplitz_test.py test_sensitivity_squared_projection_is_majorant: [1, 0.5, 0.8] is
  // projected to [1, 0.8, 0.8], an upper bound.
  @Test
  void minSep_nonMonotoneCoefficients_useTheNonIncreasingEnvelope() {
    double[] c = {1.0, 0.5, 0.8};
    assertThat(Toeplitz.envelope(c, 6)).containsExactly(1.0, 0.8, 0.8, 0, 0, 0);
    double bound = Toeplitz.minSepSensitivitySquared(c, 6, 1, 2);
    assertThat(bound).isGreaterThanOrEqualTo(bruteForceMinSep(c, 6, 1, 2) - 1e-12);
    assertThat(bound)
        .isEqualTo(Toeplitz.minSepSensitivitySquared(new double[] {1.0, 0.8, 0.8}, 6, 1, 2));
  }

  @Test
  void minSep_refusesBadArguments() {
    assertThatThrownBy(() -> Toeplitz.minSepSensitivitySquared(new double[] {1}, 1, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minSep must be >= 1, was 0");
  }

  /** max over participation sets (b apart, at most k) of ||C u||^2, by enumeration. */
  static double bruteForceMinSep(double[] c, int n, int b, int k) {
    return search(c, n, b, k, new int[k], 0, 0);
  }

  private static double search(double[] c, int n, int b, int k, int[] chosen, int count, int from) {
    double best = count > 0 ? norm(c, n, chosen, count) : 0;
    if (count == k) {
      return best;
    }
    for (int i = from; i < n; i++) {
      chosen[count] = i;
      best = Math.max(best, search(c, n, b, k, chosen, count + 1, i + b));
    }
    return best;
  }

  private static double norm(double[] c, int n, int[] chosen, int count) {
    double sum = 0;
    for (int i = 0; i < n; i++) {
      double row = 0;
      for (int p = 0; p < count; p++) {
        int lag = i - chosen[p];
        if (lag >= 0 && lag < c.length) {
          row += c[lag];
        }
      }
      sum += row * row;
    }
    return sum;
  }
}
