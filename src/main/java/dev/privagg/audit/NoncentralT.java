package dev.privagg.audit;

import org.apache.commons.statistics.distribution.NormalDistribution;

/**
 * The noncentral t law with {@code nu} degrees of freedom and noncentrality {@code lambda}: the law
 * of {@code (Z + lambda) / sqrt(V / nu)} for Z standard normal and V chi-squared with nu degrees of
 * freedom, independent (Johnson, Kotz, Balakrishnan, "Continuous Univariate Distributions", vol. 2,
 * ch. 31). It is the law of Student's two-sample t statistic when the two normal samples share one
 * spread and their means differ by {@code lambda} standard errors, which is what the audit's
 * equal-spread test needs ({@link EqualSpreadEstimate}).
 *
 * <p>The CDF is {@code P(T <= t) = E[Phi(t sqrt(V/nu) - lambda)]}, taken here over {@code u =
 * log(V/nu)}, whose density is proportional to {@code exp(nu/2 (u - e^u + 1))}: smooth, one-peaked
 * at u = 0 and falling faster than exponentially on both sides, where the trapezoidal rule on a
 * uniform grid converges geometrically (Trefethen and Weideman, "The exponentially convergent
 * trapezoidal rule", SIAM Review 2014). The weights are normalized by their own sum, so the
 * constant 1 / Gamma(nu/2) is never formed. Checked against scipy.stats.nct in {@code
 * NoncentralTTest}.
 */
final class NoncentralT {
  /** The grid ends where the density is e^-40 of its peak: the mass beyond is below 1e-16. */
  private static final double LOG_DENSITY_DROP = 40;

  /** Grid steps per the smaller of the density's and the integrand's scale. */
  private static final double STEPS_PER_SCALE = 8;

  private static final int MAX_POINTS = 40_000;

  private static final double LAMBDA_XTOL = 1e-10;

  private static final NormalDistribution STANDARD_NORMAL = NormalDistribution.of(0, 1);

  private NoncentralT() {}

  /**
   * P(T <= t) for T noncentral t with {@code nu > 0} degrees of freedom and noncentrality lambda.
   */
  static double cdf(double t, double nu, double lambda) {
    if (!(nu > 0 && Double.isFinite(nu))) {
      throw new IllegalArgumentException("nu must be > 0 and finite, was " + nu);
    }
    if (!Double.isFinite(t) || !Double.isFinite(lambda)) {
      throw new IllegalArgumentException(
          "t and lambda must be finite, were t=" + t + ", lambda=" + lambda);
    }
    double lo = logDensityEnd(nu, -1);
    double hi = logDensityEnd(nu, 1);
    // The density's own width in u is about sqrt(2/nu) (wider for small nu); Phi(t e^(u/2) -
    // lambda) turns over within about 2 / |t| in u.
    double scale = Math.min(Math.min(Math.sqrt(2 / nu), 1), 2 / (1 + Math.abs(t)));
    int points = (int) Math.min(MAX_POINTS, Math.ceil((hi - lo) / scale * STEPS_PER_SCALE) + 1);
    points = Math.max(points, 64);
    double step = (hi - lo) / (points - 1);
    double weights = 0;
    double sum = 0;
    for (int i = 0; i < points; i++) {
      double u = lo + i * step;
      // The ends carry half weight (trapezoid); their density is e^-40 of the peak anyway.
      double w = Math.exp(0.5 * nu * (u - Math.expm1(u))) * (i == 0 || i == points - 1 ? 0.5 : 1);
      weights += w;
      sum += w * STANDARD_NORMAL.cumulativeProbability(t * Math.exp(0.5 * u) - lambda);
    }
    return Math.min(1, sum / weights);
  }

  /**
   * The lambda at which {@code P(T <= t) = p}, for p in (0, 1): the CDF falls as lambda grows, so
   * this is the one-sided confidence limit of lambda with confidence p given an observed t (p =
   * 1/2: the median-unbiased estimate).
   */
  static double lambdaWithCdf(double t, double nu, double p) {
    if (!(p > 0 && p < 1)) {
      throw new IllegalArgumentException("p must be in (0, 1), was " + p);
    }
    // Around t, a few of the estimate's standard errors sqrt(1 + t^2 / (2 nu)) either side.
    double width = 4 * Math.sqrt(1 + t * t / (2 * nu)) + 4;
    double lo = t - width;
    double hi = t + width;
    while (cdf(t, nu, lo) < p) {
      lo -= 2 * width;
    }
    while (cdf(t, nu, hi) > p) {
      hi += 2 * width;
    }
    return Roots.brent(lambda -> cdf(t, nu, lambda) - p, lo, hi, LAMBDA_XTOL);
  }

  /**
   * The u on the {@code side} (-1 left, +1 right) of 0 where {@code nu/2 (u - e^u + 1)} has fallen
   * to {@link #LOG_DENSITY_DROP} below its peak at 0.
   */
  private static double logDensityEnd(double nu, int side) {
    double drop = 2 * LOG_DENSITY_DROP / nu;
    // g(u) = e^u - u - 1 rises from 0 on both sides: g(-(drop + 1)) > drop, and at u = log(drop +
    // 2) + 1, g = e (drop + 2) - u - 1 > drop; so each bracket holds the end.
    double far = side < 0 ? -(drop + 1) : Math.log(drop + 2) + 1;
    return Roots.brent(
        u -> Math.expm1(u) - u - drop, side < 0 ? far : 0, side < 0 ? 0 : far, 1e-12);
  }
}
