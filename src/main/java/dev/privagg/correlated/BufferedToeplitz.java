package dev.privagg.correlated;

import java.util.Arrays;

/**
 * A buffered-linear-Toeplitz (BLT) matrix: the n x n lower-triangular Toeplitz matrix C with
 * coefficients {@code c_0 = 1} and {@code c_i = sum_j omega_j theta_j^(i-1)} for {@code i >= 1}
 * (Dvijotham et al. 2024, arXiv:2404.16706, Def. 3.1; jax_privacy {@code toeplitz_coefs}). theta is
 * jax_privacy's {@code buf_decay}, omega its {@code output_scale}; m = 0 buffers is the identity.
 * The canonical order is theta decreasing; thetas must differ pairwise by at least {@value
 * #MIN_THETA_GAP}, the limit below which the closed forms lose all precision.
 *
 * <p>Immutable: the accessors return copies.
 */
public final class BufferedToeplitz implements NoiseCorrelation {
  /** The most buffers accepted: the closed forms and the root finder are tested up to here. */
  public static final int MAX_BUFFERS = 8;

  /** The smallest gap allowed between two thetas. */
  public static final double MIN_THETA_GAP = 1e-9;

  /** How many leading coefficients of C * C^-1 the inverse checks against the identity. */
  static final int INVERSE_CHECK_COEFFICIENTS = 32;

  private static final double INVERSE_CHECK_TOLERANCE = 1e-9;

  private static final BufferedToeplitz IDENTITY =
      new BufferedToeplitz(new double[0], new double[0]);

  private final double[] theta;
  private final double[] omega;

  private BufferedToeplitz(double[] theta, double[] omega) {
    this.theta = theta;
    this.omega = omega;
  }

  /**
   * The BLT with decays {@code theta} and output scales {@code omega} (the i-th omega belongs to
   * the i-th theta), reordered so theta decreases.
   *
   * @throws IllegalArgumentException if the lengths differ, exceed {@value #MAX_BUFFERS}, a value
   *     is not finite, or two thetas are closer than {@value #MIN_THETA_GAP}
   */
  public static BufferedToeplitz of(double[] theta, double[] omega) {
    if (theta == null || omega == null) {
      throw new IllegalArgumentException("theta and omega must not be null");
    }
    if (theta.length != omega.length) {
      throw new IllegalArgumentException(
          "theta and omega must have the same length, was "
              + theta.length
              + " and "
              + omega.length);
    }
    if (theta.length > MAX_BUFFERS) {
      throw new IllegalArgumentException(
          "buffers must be <= " + MAX_BUFFERS + ", was " + theta.length);
    }
    for (int i = 0; i < theta.length; i++) {
      if (!Double.isFinite(theta[i])) {
        throw new IllegalArgumentException("theta[" + i + "] must be finite, was " + theta[i]);
      }
      if (!Double.isFinite(omega[i])) {
        throw new IllegalArgumentException("omega[" + i + "] must be finite, was " + omega[i]);
      }
    }
    Integer[] order = new Integer[theta.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(theta[b], theta[a]));
    double[] t = new double[theta.length];
    double[] w = new double[theta.length];
    for (int i = 0; i < order.length; i++) {
      t[i] = theta[order[i]];
      w[i] = omega[order[i]];
    }
    for (int i = 1; i < t.length; i++) {
      if (!(t[i - 1] - t[i] >= MIN_THETA_GAP)) {
        throw new IllegalArgumentException(
            "theta values must differ pairwise by >= "
                + MIN_THETA_GAP
                + ", was "
                + t[i - 1]
                + " and "
                + t[i]);
      }
    }
    return new BufferedToeplitz(t, w);
  }

  /** The identity matrix, the BLT with no buffers. */
  public static BufferedToeplitz identity() {
    return IDENTITY;
  }

  /** The number of buffers m. */
  @Override
  public int buffers() {
    return theta.length;
  }

  /** The decays theta (jax_privacy {@code buf_decay}), decreasing; a copy. */
  public double[] theta() {
    return theta.clone();
  }

  /** The output scales omega (jax_privacy {@code output_scale}), in the order of theta; a copy. */
  public double[] omega() {
    return omega.clone();
  }

  double theta(int j) {
    return theta[j];
  }

  double omega(int j) {
    return omega[j];
  }

  /**
   * The first n Toeplitz coefficients {@code c_0 = 1, c_i = sum_j omega_j theta_j^(i-1)} (Dvijotham
   * et al. 2024, Def. 3.1), in O(n m).
   */
  public double[] toeplitzCoefficients(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("n must be >= 0, was " + n);
    }
    return coefficients(theta, omega, n);
  }

  /** The coefficients of any (theta, omega), valid or not: the optimizer's candidates too. */
  static double[] coefficients(double[] theta, double[] omega, int n) {
    double[] c = new double[n];
    if (n == 0) {
      return c;
    }
    c[0] = 1;
    double[] power = new double[theta.length];
    Arrays.fill(power, 1.0);
    for (int i = 1; i < n; i++) {
      double sum = 0;
      for (int j = 0; j < theta.length; j++) {
        sum += omega[j] * power[j];
        power[j] *= theta[j];
      }
      c[i] = sum;
    }
    return c;
  }

  /**
   * The "Pillutla score" {@code sum_i omega_i / theta_i} (McMahan and Pillutla 2025,
   * arXiv:2504.21413, Thm 1): for theta in (0, 1) and omega > 0, the inverse's smallest theta is
   * positive iff the score is < 1.
   */
  public double pillutlaScore() {
    double score = 0;
    for (int j = 0; j < theta.length; j++) {
      score += omega[j] / theta[j];
    }
    return score;
  }

  /**
   * The BLT of C^-1. Its thetas are the eigenvalues of {@code diag(theta) - omega 1^T} (Dvijotham
   * et al. 2024, Lemma 5.2; McMahan and Pillutla 2025, Thm 2), that is the roots z of the secular
   * equation {@code 1 + sum_j omega_j / (z - theta_j) = 0}; its omegas follow from the two theta
   * vectors in closed form ({@link #pairFromThetas}).
   *
   * <p>When all omegas have one sign the roots interlace the thetas and are found by bisection on
   * the secular function; otherwise by Aberth-Ehrlich iteration on its numerator polynomial,
   * polished by Newton steps.
   *
   * @throws IllegalArgumentException if a root is complex, two roots are closer than {@value
   *     #MIN_THETA_GAP}, or the first {@value #INVERSE_CHECK_COEFFICIENTS} coefficients of C C^-1
   *     differ from the identity's by more than 1e-9 (relative to the size of the terms)
   */
  public BufferedToeplitz inverse() {
    if (theta.length == 0) {
      return IDENTITY;
    }
    double[] roots = SecularRoots.roots(theta, omega);
    BufferedToeplitz inverse = pairFromThetas(theta, roots)[1];
    requireInverse(this, inverse);
    return inverse;
  }

  /**
   * The pair (C, C^-1) whose thetas are {@code theta} and {@code thetaHat}, with the omegas in
   * closed form (Dvijotham et al. 2024, Lemma 5.2; McMahan and Pillutla 2025, Thm 2): {@code
   * omega_i = prod_j (theta_i - thetaHat_j) / prod_{j != i} (theta_i - theta_j)} and {@code
   * omegaHat_i = prod_j (thetaHat_i - theta_j) / prod_{j != i} (thetaHat_i - thetaHat_j)}.
   *
   * @throws IllegalArgumentException as {@link #of} does for either vector
   */
  public static BufferedToeplitz[] pairFromThetas(double[] theta, double[] thetaHat) {
    if (theta.length != thetaHat.length) {
      throw new IllegalArgumentException(
          "theta and thetaHat must have the same length, was "
              + theta.length
              + " and "
              + thetaHat.length);
    }
    return new BufferedToeplitz[] {
      of(theta, pairOmega(theta, thetaHat)), of(thetaHat, pairOmega(thetaHat, theta))
    };
  }

  /** McMahan and Pillutla 2025, Thm 2: the omegas of the BLT with thetas a and inverse thetas b. */
  static double[] pairOmega(double[] a, double[] b) {
    int m = a.length;
    double[] w = new double[m];
    for (int i = 0; i < m; i++) {
      double num = 1;
      double den = 1;
      for (int j = 0; j < m; j++) {
        num *= a[i] - b[j];
        if (j != i) {
          den *= a[i] - a[j];
        }
      }
      w[i] = num / den;
    }
    return w;
  }

  private static void requireInverse(BufferedToeplitz c, BufferedToeplitz inverse) {
    int n = INVERSE_CHECK_COEFFICIENTS;
    double[] a = c.toeplitzCoefficients(n);
    double[] b = inverse.toeplitzCoefficients(n);
    for (int k = 0; k < n; k++) {
      double sum = 0;
      double scale = 0;
      for (int i = 0; i <= k; i++) {
        sum += a[i] * b[k - i];
        scale += Math.abs(a[i] * b[k - i]);
      }
      double expected = k == 0 ? 1 : 0;
      if (!(Math.abs(sum - expected) <= INVERSE_CHECK_TOLERANCE * Math.max(1, scale))) {
        throw new IllegalArgumentException(
            "inverse check failed: coefficient "
                + k
                + " of C * C^-1 must be "
                + expected
                + " within 1e-9, was "
                + sum
                + " for "
                + c);
      }
    }
  }

  /**
   * Refuses a BLT outside the conditions the mechanism relies on, naming the first one broken:
   *
   * <ul>
   *   <li>every theta in (0, 1) and every omega > 0, and {@code sum(omega) <= 1}: then {@code 1 =
   *       c_0 >= c_1 = sum(omega)} and {@code c_i} decreases for i >= 1, so the coefficients are
   *       non-negative and non-increasing, which makes the min-separation sensitivity of {@link
   *       Toeplitz#minSepSensitivitySquared} exact (Kalinin and Lampert 2024, Thm 2);
   *   <li>the inverse's thetas real with |thetaHat| < 1, so the noise stays bounded. Under the
   *       first conditions this always holds (the secular roots interlace: {@code theta_m -
   *       sum(omega) < thetaHat_m < theta_m < ... < thetaHat_1 < theta_1}); it is checked anyway.
   * </ul>
   *
   * <p>The Pillutla score < 1 (McMahan and Pillutla 2025, Thm 1a) is not required: it only makes
   * the inverse's smallest theta positive (no oscillating noise term), which neither privacy nor
   * boundedness needs; the optimizer keeps it below 1 by its barrier, as jax_privacy does.
   *
   * @throws IllegalArgumentException naming the broken condition and the value
   */
  public void requireValidForMechanism() {
    double sum = 0;
    for (int j = 0; j < theta.length; j++) {
      if (!(theta[j] > 0 && theta[j] < 1)) {
        throw new IllegalArgumentException("theta[" + j + "] must be in (0, 1), was " + theta[j]);
      }
      if (!(omega[j] > 0)) {
        throw new IllegalArgumentException("omega[" + j + "] must be > 0, was " + omega[j]);
      }
      sum += omega[j];
    }
    if (!(sum <= 1)) {
      throw new IllegalArgumentException(
          "sum(omega) must be <= 1 (non-increasing coefficients), was " + sum);
    }
    double[] thetaHat = inverse().theta;
    for (int j = 0; j < thetaHat.length; j++) {
      if (!(Math.abs(thetaHat[j]) < 1)) {
        throw new IllegalArgumentException(
            "inverse theta[" + j + "] must be in (-1, 1), was " + thetaHat[j]);
      }
    }
  }

  /** {@link #correlate(BufferedToeplitz, double[][], double[])} with this strategy. */
  @Override
  public void correlate(double[][] buffers, double[] values) {
    correlate(this, buffers, values);
  }

  /**
   * One step of streaming noise generation: replaces {@code values} (fresh i.i.d. normals z_t for
   * one block of d coordinates) in place by {@code (C^-1 Z)_t} and updates the m buffers, without
   * allocating (McMahan, Xu and Zhang 2024, arXiv:2408.08868, Alg. 3): {@code x_t = z_t - sum_j
   * omega_j buf_j}, then {@code buf_j = theta_j buf_j + x_t}. Buffers start at zero.
   *
   * @param c the strategy matrix C (not its inverse)
   * @param buffers m arrays of length d, the state carried from round to round
   * @param values the d fresh normals of this round, overwritten by the correlated noise
   */
  public static void correlate(BufferedToeplitz c, double[][] buffers, double[] values) {
    int m = c.theta.length;
    if (buffers.length != m) {
      throw new IllegalArgumentException(
          "buffers must hold " + m + " arrays (one per buffer), was " + buffers.length);
    }
    int d = values.length;
    for (int j = 0; j < m; j++) {
      if (buffers[j].length != d) {
        throw new IllegalArgumentException(
            "buffers[" + j + "] must have length " + d + " (as values), was " + buffers[j].length);
      }
    }
    for (int i = 0; i < d; i++) {
      double x = values[i];
      for (int j = 0; j < m; j++) {
        x -= c.omega[j] * buffers[j][i];
      }
      for (int j = 0; j < m; j++) {
        buffers[j][i] = c.theta[j] * buffers[j][i] + x;
      }
      values[i] = x;
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BufferedToeplitz other
        && Arrays.equals(theta, other.theta)
        && Arrays.equals(omega, other.omega);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(theta) + Arrays.hashCode(omega);
  }

  @Override
  public String toString() {
    return "BufferedToeplitz[theta="
        + Arrays.toString(theta)
        + ", omega="
        + Arrays.toString(omega)
        + "]";
  }
}
