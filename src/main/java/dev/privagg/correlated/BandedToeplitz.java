package dev.privagg.correlated;

import java.util.Arrays;

/**
 * A b-banded lower-triangular Toeplitz strategy C for the matrix mechanism on the prefix-sum
 * workload: C's first column holds the b coefficients, scaled to unit L2 norm, so every column of C
 * has norm at most 1 and one participation has sensitivity at most 1. Two participations at least b
 * rounds apart touch disjoint rows of C, which is what lets amplified banded matrix factorization
 * account each participation as one Poisson-sampled Gaussian (Choquette-Choo et al., NeurIPS 2023,
 * arXiv:2306.08153, Thm 4; jax_privacy {@code toeplitz.optimize_banded_toeplitz}). One band is the
 * identity: independent noise, DP-SGD / DP-FedAvg.
 *
 * <p>The noise of round t is {@code (C^-1 Z)_t}: with C banded this is a recursion over the last b
 * - 1 outputs, {@code y_t = (z_t - sum_{k=1}^{b-1} c_k y_{t-k}) / c_0}, so a generator keeps b - 1
 * model-sized buffers.
 */
public final class BandedToeplitz implements NoiseCorrelation {
  /** The most bands a strategy takes: 1,024 buffers of the model's size are already a lot. */
  public static final int MAX_BANDS = 1024;

  /**
   * How far from 1 a squared norm may be and still count as unit: a few roundings of a sum of
   * squares, and a sensitivity at most 1 + 5e-15, below the accountants' own precision.
   */
  static final double UNIT_NORM_TOLERANCE = 1e-14;

  private final double[] coefficients;

  private BandedToeplitz(double[] coefficients) {
    this.coefficients = coefficients;
  }

  /**
   * The strategy with these coefficients, scaled to unit norm (and sign-flipped if the first is
   * negative; neither changes the noise's privacy or its loss); coefficients already of unit norm
   * are kept as given, so that {@code of(of(c).coefficients())} is {@code of(c)}.
   *
   * @throws IllegalArgumentException if there are no coefficients or more than {@link #MAX_BANDS},
   *     one is not finite, the first is zero, or the norm overflows
   */
  public static BandedToeplitz of(double[] coefficients) {
    if (coefficients == null || coefficients.length < 1 || coefficients.length > MAX_BANDS) {
      throw new IllegalArgumentException(
          "a banded strategy needs 1 to "
              + MAX_BANDS
              + " coefficients, was "
              + (coefficients == null ? "none" : String.valueOf(coefficients.length)));
    }
    double largest = 0;
    for (int i = 0; i < coefficients.length; i++) {
      if (!Double.isFinite(coefficients[i])) {
        throw new IllegalArgumentException(
            "coefficient " + i + " must be finite, was " + coefficients[i]);
      }
      largest = Math.max(largest, Math.abs(coefficients[i]));
    }
    if (coefficients[0] == 0) {
      throw new IllegalArgumentException("the first coefficient must be non-zero, was 0");
    }
    double given = 0;
    for (double v : coefficients) {
      given += v * v;
    }
    if (coefficients[0] > 0 && Math.abs(given - 1) <= UNIT_NORM_TOLERANCE) {
      // Already unit norm (a strategy this method made, pinned in a spec from what a job's state
      // records): scaling again could move its last bits, and the restore would see another C.
      return new BandedToeplitz(coefficients.clone());
    }
    // Scaled by the largest first, so that tiny (subnormal) or huge coefficients square exactly
    // enough: the result's norm is then 1 up to rounding.
    double[] c = new double[coefficients.length];
    double squares = 0;
    for (int i = 0; i < c.length; i++) {
      c[i] = coefficients[i] / largest;
      squares += c[i] * c[i];
    }
    double scale = Math.copySign(1 / Math.sqrt(squares), c[0]);
    for (int i = 0; i < c.length; i++) {
      c[i] *= scale;
    }
    return new BandedToeplitz(c);
  }

  /** One band: C = I, independent noise each round. */
  public static BandedToeplitz identity() {
    return new BandedToeplitz(new double[] {1});
  }

  /** The number of bands b. */
  public int bands() {
    return coefficients.length;
  }

  /** The unit-norm coefficients c_0..c_{b-1} (a copy). */
  public double[] coefficients() {
    return coefficients.clone();
  }

  /** Buffers the streaming inverse keeps: the last b - 1 outputs. */
  @Override
  public int buffers() {
    return coefficients.length - 1;
  }

  /** The first n coefficients of C^-1 (its noising coefficients). O(n b). */
  public double[] noisingCoefficients(int n) {
    return Toeplitz.inverseCoefficients(coefficients, n);
  }

  /**
   * The expected squared error of the prefix sums over n rounds with unit noise, reduced by {@code
   * error} (per-participation sensitivity is 1): jax_privacy {@code toeplitz.loss}.
   */
  public double loss(int n, ErrorKind error) {
    return loss(n, error, Workload.PREFIX_SUMS);
  }

  /** As {@link #loss(int, ErrorKind)}, for the models {@code workload} releases. */
  public double loss(int n, ErrorKind error, Workload workload) {
    return lossAndGradient(coefficients, n, error, workload, null);
  }

  /**
   * Replaces {@code values} (this round's fresh Z) by this round's correlated noise {@code (C^-1
   * Z)_t}, given {@code buffers} holding the previous outputs, most recent first, and shifts it in.
   * The buffer arrays are reused: after the call {@code buffers[0]} holds a copy of the output.
   *
   * @throws IllegalArgumentException if there are not {@link #buffers()} buffers of the values'
   *     length
   */
  @Override
  public void correlate(double[][] buffers, double[] values) {
    if (buffers.length != buffers()) {
      throw new IllegalArgumentException(
          "a "
              + bands()
              + "-banded strategy keeps "
              + buffers()
              + " buffers, got "
              + buffers.length);
    }
    for (double[] buffer : buffers) {
      if (buffer.length != values.length) {
        throw new IllegalArgumentException(
            "buffers must have the values' length " + values.length + ", was " + buffer.length);
      }
    }
    double inverseLead = 1 / coefficients[0];
    for (int i = 0; i < values.length; i++) {
      double y = values[i];
      for (int k = 1; k < coefficients.length; k++) {
        y -= coefficients[k] * buffers[k - 1][i];
      }
      values[i] = y * inverseLead;
    }
    if (buffers.length > 0) {
      double[] oldest = buffers[buffers.length - 1];
      System.arraycopy(buffers, 0, buffers, 1, buffers.length - 1);
      System.arraycopy(values, 0, oldest, 0, values.length);
      buffers[0] = oldest;
    }
  }

  /** {@link #lossAndGradient(double[], int, ErrorKind, Workload, double[])} on the prefix sums. */
  static double lossAndGradient(double[] c, int n, ErrorKind error, double[] gradient) {
    return lossAndGradient(c, n, error, Workload.PREFIX_SUMS, gradient);
  }

  /**
   * The scale-invariant loss {@code E(C^-1) ||c_(<n)||^2} of unnormalized coefficients c over n
   * rounds, and its gradient in {@code gradient} when not null. E is {@code sum_u w_u B_u^2} with B
   * = A x, the first column of A C^-1 for x = C^-1 e_0 (the prefix sums of x for SGD), and w_u = (n
   * - u) / n for the mean error, 1 for the max (the last round's). The gradient is the adjoint:
   * with g = A^T (dE/dB) = dE/dx and C^T lambda = g, dE/dc_i = - sum_k lambda_k x_(k-i). O(n b).
   */
  static double lossAndGradient(
      double[] c, int n, ErrorKind error, Workload workload, double[] gradient) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, was " + n);
    }
    int b = c.length;
    double[] x = Toeplitz.inverseCoefficients(c, n);
    double[] prefix = workload.apply(x);
    double e = 0;
    for (int u = 0; u < n; u++) {
      e += weight(u, n, error) * prefix[u] * prefix[u];
    }
    // Only the first n coefficients reach an n x n C: its columns' largest norm.
    int reach = Math.min(b, n);
    double squares = Toeplitz.sensitivitySquared(c, n);
    if (gradient == null) {
      return e * squares;
    }
    double[] dB = new double[n];
    for (int u = 0; u < n; u++) {
      dB[u] = 2 * weight(u, n, error) * prefix[u];
    }
    double[] g = workload.transposeApply(dB);
    double[] lambda = new double[n];
    for (int k = n - 1; k >= 0; k--) {
      double rhs = g[k];
      for (int i = 1; i < b && k + i < n; i++) {
        rhs -= c[i] * lambda[k + i];
      }
      lambda[k] = rhs / c[0];
    }
    Arrays.fill(gradient, 0);
    for (int i = 0; i < b; i++) {
      double dE = 0;
      for (int k = i; k < n; k++) {
        dE -= lambda[k] * x[k - i];
      }
      gradient[i] = squares * dE + (i < reach ? 2 * e * c[i] : 0);
    }
    return e * squares;
  }

  private static double weight(int u, int n, ErrorKind error) {
    return error == ErrorKind.MEAN ? (double) (n - u) / n : 1;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BandedToeplitz other && Arrays.equals(coefficients, other.coefficients);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(coefficients);
  }

  @Override
  public String toString() {
    return "BandedToeplitz" + Arrays.toString(coefficients);
  }
}
