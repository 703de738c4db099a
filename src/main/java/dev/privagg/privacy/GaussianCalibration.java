package dev.privagg.privacy;

/**
 * Calibration of a single Gaussian release with L2 sensitivity {@code s} to an (epsilon, delta)
 * target, and the converse: the exact (epsilon, delta) curve of a Gaussian with a given std.
 *
 * <p>The analytic calibration (Balle and Wang, ICML 2018, Theorem 8) is exact: a Gaussian with std
 * {@code sigma} is (epsilon, delta)-DP iff {@code Phi(s/(2 sigma) - epsilon sigma / s) - e^epsilon
 * Phi(-s/(2 sigma) - epsilon sigma / s) <= delta}. It is solved here by bisection on sigma, always
 * returning the side that satisfies the inequality. The classic calibration {@code sqrt(2
 * ln(1.25/delta)) s / epsilon} (Dwork and Roth 2014, Theorem A.1) is only valid for epsilon < 1.
 */
public final class GaussianCalibration {
  /** How sigma is derived from (epsilon, delta). */
  public enum Method {
    /** Balle and Wang 2018, Theorem 8 (exact; the default). */
    ANALYTIC,
    /** Dwork and Roth 2014, Theorem A.1 (loose; epsilon < 1 only). */
    CLASSIC
  }

  private static final int BISECTION_STEPS = 200;

  private GaussianCalibration() {}

  /** The std of Gaussian noise that makes one release with L2 sensitivity s (eps, delta)-DP. */
  public static double sigma(Method method, double epsilon, double delta, double sensitivity) {
    return switch (method) {
      case ANALYTIC -> analyticSigma(epsilon, delta, sensitivity);
      case CLASSIC -> classicSigma(epsilon, delta, sensitivity);
    };
  }

  /** Balle and Wang 2018, Theorem 8: the smallest sigma with delta(sigma) <= delta. */
  public static double analyticSigma(double epsilon, double delta, double sensitivity) {
    Checks.positiveFinite("epsilon", epsilon);
    Checks.openUnitInterval("delta", delta);
    Checks.positiveFinite("sensitivity", sensitivity);
    double lo = 1.0;
    double hi = 1.0;
    if (gaussianDelta(epsilon, 1.0) > delta) {
      while (gaussianDelta(epsilon, hi) > delta) {
        lo = hi;
        hi *= 2;
      }
    } else {
      while (lo > Double.MIN_NORMAL && gaussianDelta(epsilon, lo) <= delta) {
        hi = lo;
        lo /= 2;
      }
    }
    for (int i = 0; i < BISECTION_STEPS && hi - lo > Math.ulp(hi); i++) {
      double mid = 0.5 * (lo + hi);
      if (gaussianDelta(epsilon, mid) > delta) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return hi * sensitivity;
  }

  /** Dwork and Roth 2014, Theorem A.1: sqrt(2 ln(1.25/delta)) s / epsilon, for epsilon < 1. */
  public static double classicSigma(double epsilon, double delta, double sensitivity) {
    Checks.positiveFinite("epsilon", epsilon);
    Checks.openUnitInterval("delta", delta);
    Checks.positiveFinite("sensitivity", sensitivity);
    if (!(epsilon < 1)) {
      throw new IllegalArgumentException(
          "the classic calibration sqrt(2 ln(1.25/delta)) * sensitivity / epsilon is only valid"
              + " for epsilon < 1, was "
              + epsilon
              + "; use the analytic calibration (Balle and Wang 2018)");
    }
    return Math.sqrt(2 * Math.log(1.25 / delta)) * sensitivity / epsilon;
  }

  /**
   * The tight delta at {@code epsilon} of a Gaussian whose std is {@code noiseMultiplier} times the
   * sensitivity (Balle and Wang 2018, Theorem 8), evaluated in log space.
   */
  public static double gaussianDelta(double epsilon, double noiseMultiplier) {
    double t = noiseMultiplier;
    double logPlus = LogMath.logNormalCdf(1 / (2 * t) - epsilon * t);
    double logMinus = epsilon + LogMath.logNormalCdf(-1 / (2 * t) - epsilon * t);
    if (logMinus >= logPlus) {
      return 0;
    }
    return Math.exp(logPlus) * -Math.expm1(logMinus - logPlus);
  }

  /**
   * The smallest epsilon at which a Gaussian with the given noise multiplier is (epsilon, delta)-DP
   * (the inverse of Theorem 8 in epsilon); infinite for a noise multiplier of 0.
   */
  public static double gaussianEpsilon(double noiseMultiplier, double delta) {
    Checks.nonNegativeFinite("noiseMultiplier", noiseMultiplier);
    Checks.openUnitInterval("delta", delta);
    if (noiseMultiplier == 0) {
      return Double.POSITIVE_INFINITY;
    }
    if (gaussianDelta(0, noiseMultiplier) <= delta) {
      return 0;
    }
    double lo = 0;
    double hi = 1;
    while (gaussianDelta(hi, noiseMultiplier) > delta) {
      lo = hi;
      hi *= 2;
      if (hi > 1e9) {
        return Double.POSITIVE_INFINITY;
      }
    }
    for (int i = 0; i < BISECTION_STEPS && hi - lo > Math.ulp(hi); i++) {
      double mid = 0.5 * (lo + hi);
      if (gaussianDelta(mid, noiseMultiplier) > delta) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return hi;
  }
}
