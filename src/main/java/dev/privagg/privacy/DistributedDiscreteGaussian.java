package dev.privagg.privacy;

/**
 * Privacy of the distributed discrete Gaussian: a sum of integer vectors whose L2 (L1) sensitivity
 * is {@code l2} ({@code l1}), released plus the sum of {@code n} independent N_Z(0, sigma^2)^d
 * shares. Kairouz, Liu, Steinke, "The Distributed Discrete Gaussian Mechanism for Federated
 * Learning with Secure Aggregation" (ICML 2021): Theorem 1 bounds its concentrated DP, Proposition
 * 14 its Renyi DP at order alpha by the least of
 *
 * <pre>
 *   alpha l2^2 / (2 n sigma^2) + tau d,
 *   alpha / 2 * (l2^2 / (n sigma^2) + 2 tau l1 / (sqrt(n) sigma) + tau^2 d),
 *   alpha / 2 * (l2 / (sqrt(n) sigma) + tau sqrt(d))^2,
 * </pre>
 *
 * with {@code tau = 10 sum_{k=1}^{n-1} exp(-2 pi^2 sigma^2 k / (k + 1))}, for sigma >= 1/2.
 *
 * <p>The ledger composes Gaussians, so a round is charged as the Gaussian whose RDP is at least the
 * first term at every order alpha >= 1 ({@link #dominatingNoiseMultiplier}): 1 / z^2 = l2^2 / (n
 * sigma^2) + 2 tau d. Once sigma is a few units tau underflows and z is the central Gaussian's
 * sqrt(n) sigma / l2.
 */
public final class DistributedDiscreteGaussian {
  /** KLS21 Theorem 1 needs sigma >= 1/2. */
  public static final double MIN_SIGMA_SQUARED = 0.25;

  /** Relative margin on tau's floating-point sum, so rounding never lowers it. */
  private static final double TAU_MARGIN = 1e-9;

  private DistributedDiscreteGaussian() {}

  /** tau of KLS21 Theorem 1 for n shares of variance sigma^2 (0 for one share). */
  public static double tau(double sigmaSquared, long n) {
    checkShares(sigmaSquared, n);
    double sum = 0;
    double rate = 2 * Math.PI * Math.PI * sigmaSquared;
    for (long k = 1; k < n; k++) {
      double term = StrictMath.exp(-rate * k / (k + 1));
      if (term == 0) {
        break; // the terms decrease in k: every later one underflows too
      }
      sum += term;
    }
    return 10 * sum * (1 + TAU_MARGIN);
  }

  /** The Renyi DP at order alpha of one release: KLS21 Proposition 14, the least of its terms. */
  public static double rdp(
      double alpha, double l2, double l1, double sigmaSquared, long n, long dimension) {
    if (!(alpha > 1)) {
      throw new IllegalArgumentException("alpha must be > 1, was " + alpha);
    }
    checkSensitivity(l2, l1, dimension);
    double tau = tau(sigmaSquared, n);
    double scale = Math.sqrt(n * sigmaSquared);
    double l2Scale = l2 / scale;
    double l1Scale = l1 / scale;
    double first = alpha / 2 * l2Scale * l2Scale + tau * dimension;
    double second = alpha / 2 * (l2Scale * l2Scale + 2 * l1Scale * tau + tau * tau * dimension);
    double shifted = l2Scale + Math.sqrt(dimension) * tau;
    double third = alpha / 2 * shifted * shifted;
    return Math.min(first, Math.min(second, third));
  }

  /**
   * The noise multiplier of the Gaussian whose RDP at every order >= 1 is at least the first bound
   * of {@link #rdp}, which a ledger of Gaussian rounds can compose.
   */
  public static double dominatingNoiseMultiplier(
      double l2, double sigmaSquared, long n, long dimension) {
    checkSensitivity(l2, l2, dimension);
    double tau = tau(sigmaSquared, n);
    return 1 / Math.sqrt(l2 * l2 / (n * sigmaSquared) + 2 * tau * dimension);
  }

  private static void checkShares(double sigmaSquared, long n) {
    if (!(sigmaSquared >= MIN_SIGMA_SQUARED && Double.isFinite(sigmaSquared))) {
      throw new IllegalArgumentException(
          "sigma^2 must be >= 1/4 (KLS21 Theorem 1 needs sigma >= 1/2) and finite, was "
              + sigmaSquared);
    }
    if (n < 1) {
      throw new IllegalArgumentException("n (noise shares) must be >= 1, was " + n);
    }
  }

  private static void checkSensitivity(double l2, double l1, long dimension) {
    if (!(l2 > 0 && Double.isFinite(l2) && l1 >= l2 && Double.isFinite(l1))) {
      throw new IllegalArgumentException(
          "sensitivities must satisfy 0 < l2 <= l1 < infinity, were l2 = " + l2 + ", l1 = " + l1);
    }
    if (dimension < 1) {
      throw new IllegalArgumentException("dimension must be >= 1, was " + dimension);
    }
  }
}
