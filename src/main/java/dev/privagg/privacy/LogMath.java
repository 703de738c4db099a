package dev.privagg.privacy;

import org.apache.commons.numbers.gamma.Erfc;
import org.apache.commons.numbers.gamma.Erfcx;
import org.apache.commons.numbers.gamma.LogGamma;

/**
 * Numerically stable log-space helpers shared by the accountants, the calibrations and the audit's
 * estimators.
 */
public final class LogMath {
  private static final double LOG_HALF = Math.log(0.5);
  private static final double SQRT2 = Math.sqrt(2.0);

  private LogMath() {}

  /** log(exp(a) + exp(b)) without overflow. */
  public static double logAdd(double a, double b) {
    double hi = Math.max(a, b);
    double lo = Math.min(a, b);
    if (hi == Double.NEGATIVE_INFINITY) {
      return hi;
    }
    return hi + Math.log1p(Math.exp(lo - hi));
  }

  /** log(exp(a) - exp(b)) for a >= b; -inf when equal. */
  public static double logSub(double a, double b) {
    if (b > a) {
      throw new ArithmeticException("logSub needs a >= b, was a=" + a + ", b=" + b);
    }
    if (b == Double.NEGATIVE_INFINITY) {
      return a;
    }
    if (a == b) {
      return Double.NEGATIVE_INFINITY;
    }
    return a + Math.log(-Math.expm1(b - a));
  }

  /** log(erfc(x)); for large x uses erfc(x) = erfcx(x) * exp(-x^2) so it never underflows. */
  static double logErfc(double x) {
    if (x < 1.0) {
      return Math.log(Erfc.value(x));
    }
    return Math.log(Erfcx.value(x)) - x * x;
  }

  /** log Phi(x), the log of the standard normal CDF, accurate far into the lower tail. */
  public static double logNormalCdf(double x) {
    return LOG_HALF + logErfc(-x / SQRT2);
  }

  /** The standard normal CDF Phi(x). */
  static double normalCdf(double x) {
    return 0.5 * Erfc.value(-x / SQRT2);
  }

  /** log |binom(alpha, k)| for real alpha and integer k >= 0 (generalised binomial). */
  static double logAbsBinomial(double alpha, int k) {
    // |binom(a, k)| = |Gamma(a+1)| / (k! |Gamma(a-k+1)|); log|Gamma| handles negative arguments.
    return logAbsGamma(alpha + 1) - LogGamma.value(k + 1.0) - logAbsGamma(alpha - k + 1);
  }

  private static double logAbsGamma(double x) {
    if (x > 0) {
      return LogGamma.value(x);
    }
    // Reflection: |Gamma(x)| = pi / (|sin(pi x)| * Gamma(1 - x)) for non-integer x <= 0.
    return Math.log(Math.PI) - Math.log(Math.abs(Math.sin(Math.PI * x))) - LogGamma.value(1 - x);
  }
}
