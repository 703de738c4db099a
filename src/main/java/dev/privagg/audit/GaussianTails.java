package dev.privagg.audit;

import org.apache.commons.numbers.gamma.Erfc;
import org.apache.commons.numbers.gamma.Erfcx;

/**
 * The log of the standard normal CDF, accurate far into the lower tail where the estimators' false
 * positive and negative rates live, and log-space sums (copies of the privacy package's
 * package-private helpers, which this package does not widen).
 */
final class GaussianTails {
  private static final double LOG_HALF = Math.log(0.5);
  private static final double SQRT2 = Math.sqrt(2.0);

  private GaussianTails() {}

  /** log Phi(x); for x < -sqrt(2) uses erfc(z) = erfcx(z) e^(-z^2), so it never underflows. */
  static double logCdf(double x) {
    double z = -x / SQRT2;
    if (z < 1.0) {
      return LOG_HALF + Math.log(Erfc.value(z));
    }
    return LOG_HALF + Math.log(Erfcx.value(z)) - z * z;
  }

  /** log(e^a + e^b) without overflow. */
  static double logAdd(double a, double b) {
    double hi = Math.max(a, b);
    double lo = Math.min(a, b);
    if (hi == Double.NEGATIVE_INFINITY) {
      return hi;
    }
    return hi + Math.log1p(Math.exp(lo - hi));
  }

  /** log(e^a - e^b) for a >= b; -infinity when a <= b (rounding can make a mass 0 that way). */
  static double logSub(double a, double b) {
    if (b == Double.NEGATIVE_INFINITY) {
      return a;
    }
    if (!(a > b)) {
      return Double.NEGATIVE_INFINITY;
    }
    return a + Math.log(-Math.expm1(b - a));
  }
}
