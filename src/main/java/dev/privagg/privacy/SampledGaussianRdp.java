package dev.privagg.privacy;

/**
 * Renyi DP of the Poisson-subsampled Gaussian mechanism, per Mironov, Talwar, Zhang, "Renyi
 * Differential Privacy of the Sampled Gaussian Mechanism", 2019.
 *
 * <p>For sampling rate {@code q} and noise multiplier {@code z} (std / L2 sensitivity), the RDP at
 * order {@code alpha > 1} is {@code log(A_alpha) / (alpha - 1)}. {@code A_alpha} is computed
 * exactly at every order: by the finite binomial sum at integer orders (Section 3.3, eq. for
 * integer alpha) and by the two convergent series of Section 3.3 at fractional orders (no upper
 * bound is substituted). All sums run in log space, so large orders and tiny {@code q} neither
 * overflow nor underflow. Edge cases: {@code q = 0} gives 0; {@code z = 0} gives +infinity; {@code
 * q = 1} gives the plain Gaussian's {@code alpha / (2 z^2)} (Mironov 2017, Prop. 7).
 */
public final class SampledGaussianRdp {
  /** Series terms below exp(-30) relative to unity no longer change A_alpha in double precision. */
  private static final double SERIES_CUTOFF = -30.0;

  private static final int MAX_SERIES_TERMS = 100_000;

  private SampledGaussianRdp() {}

  /** RDP epsilon at {@code order} for one application of the sampled Gaussian. */
  public static double rdp(double samplingRate, double noiseMultiplier, double order) {
    if (!(samplingRate >= 0 && samplingRate <= 1)) {
      throw new IllegalArgumentException("samplingRate must be in [0, 1], was " + samplingRate);
    }
    Checks.nonNegativeFinite("noiseMultiplier", noiseMultiplier);
    if (!(order > 1 && Double.isFinite(order))) {
      throw new IllegalArgumentException("order must be > 1 and finite, was " + order);
    }
    if (samplingRate == 0) {
      return 0;
    }
    if (noiseMultiplier == 0) {
      return Double.POSITIVE_INFINITY;
    }
    if (samplingRate == 1) {
      return order / (2 * noiseMultiplier * noiseMultiplier);
    }
    double logA =
        order == Math.rint(order)
            ? logAIntegerOrder(samplingRate, noiseMultiplier, (int) order)
            : logAFractionalOrder(samplingRate, noiseMultiplier, order);
    return logA / (order - 1);
  }

  /** Mironov et al. 2019, Sec. 3.3: A = sum_k binom(a,k) (1-q)^(a-k) q^k exp((k^2 - k)/(2 z^2)). */
  private static double logAIntegerOrder(double q, double z, int alpha) {
    double logA = Double.NEGATIVE_INFINITY;
    double logQ = Math.log(q);
    double log1mQ = Math.log1p(-q);
    for (int k = 0; k <= alpha; k++) {
      double term =
          LogMath.logAbsBinomial(alpha, k)
              + k * logQ
              + (alpha - k) * log1mQ
              + (k * (double) k - k) / (2 * z * z);
      logA = LogMath.logAdd(logA, term);
    }
    return logA;
  }

  /**
   * Mironov et al. 2019, Sec. 3.3, fractional alpha: A = A0 + A1, two series split at z0 = z^2
   * log(1/q - 1) + 1/2, each term weighted by a Gaussian tail (erfc) probability. The generalised
   * binomial coefficients change sign, so each series is accumulated with signed log-space
   * additions.
   */
  private static double logAFractionalOrder(double q, double z, double alpha) {
    double logA0 = Double.NEGATIVE_INFINITY;
    double logA1 = Double.NEGATIVE_INFINITY;
    double z0 = z * z * Math.log(1 / q - 1) + 0.5;
    double logQ = Math.log(q);
    double log1mQ = Math.log1p(-q);
    double sqrt2z = Math.sqrt(2) * z;
    int sign = 1; // sign of binom(alpha, k), updated as k grows
    for (int k = 0; k < MAX_SERIES_TERMS; k++) {
      if (k > 0) {
        sign = (alpha - (k - 1)) < 0 ? -sign : sign;
      }
      double logCoef = LogMath.logAbsBinomial(alpha, k);
      double j = alpha - k;
      double logT0 = logCoef + k * logQ + j * log1mQ;
      double logT1 = logCoef + j * logQ + k * log1mQ;
      double logE0 = Math.log(0.5) + LogMath.logErfc((k - z0) / sqrt2z);
      double logE1 = Math.log(0.5) + LogMath.logErfc((z0 - j) / sqrt2z);
      double logS0 = logT0 + (k * (double) k - k) / (2 * z * z) + logE0;
      double logS1 = logT1 + (j * j - j) / (2 * z * z) + logE1;
      if (sign > 0) {
        logA0 = LogMath.logAdd(logA0, logS0);
        logA1 = LogMath.logAdd(logA1, logS1);
      } else {
        logA0 = LogMath.logSub(logA0, logS0);
        logA1 = LogMath.logSub(logA1, logS1);
      }
      if (Math.max(logS0, logS1) < SERIES_CUTOFF) {
        return LogMath.logAdd(logA0, logA1);
      }
    }
    throw new ArithmeticException(
        "RDP series did not converge for q=" + q + ", z=" + z + ", order=" + alpha);
  }
}
