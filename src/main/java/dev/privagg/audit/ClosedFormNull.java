package dev.privagg.audit;

import org.apache.commons.numbers.gamma.LogBeta;
import org.apache.commons.numbers.gamma.LogGamma;
import org.apache.commons.statistics.distribution.BetaDistribution;

/**
 * The law of the cosine between a fixed vector and a uniformly random direction in R^dim: the
 * statistic of an unseen canary in the one-shot estimate, known in closed form (Andrew et al.,
 * "One-shot Empirical Privacy Estimation for Federated Learning", ICLR 2024, Sec. 4). Its density
 * is {@code z (1 - t^2)^((dim - 3) / 2)} on [-1, 1] with {@code z = Gamma(dim/2) / (sqrt(pi)
 * Gamma((dim - 1)/2))}, so {@code (1 + t) / 2} is Beta((dim - 1)/2, (dim - 1)/2).
 *
 * <p>The reference (google-research/federated one_shot_epe, ClosedFormNullCalculator) integrates
 * the density numerically; here the CDF is that regularized incomplete beta function, exact to
 * double precision (a test checks it against numerical integration of the density), and its log
 * stays finite where the CDF itself underflows. The estimators use it below dim 1000 and N(0,
 * 1/dim) from there on, as the reference does.
 */
public final class ClosedFormNull {
  /** Below this the CDF is taken as a series in log space instead of the log of the CDF. */
  private static final double LOG_SERIES_BELOW = 1e-300;

  private static final int MAX_SERIES_TERMS = 100_000;

  private final int dim;
  private final double shape;
  private final double logNormalization;
  private final BetaDistribution halfShifted;

  /** The null law in dimension {@code dim >= 2}. */
  public ClosedFormNull(int dim) {
    if (dim < 2) {
      throw new IllegalArgumentException(
          "dim must be >= 2 (a cosine in one dimension is always +-1), was " + dim);
    }
    this.dim = dim;
    this.shape = 0.5 * (dim - 1);
    this.logNormalization =
        LogGamma.value(0.5 * dim) - LogGamma.value(0.5 * (dim - 1)) - 0.5 * Math.log(Math.PI);
    this.halfShifted = BetaDistribution.of(shape, shape);
  }

  public int dim() {
    return dim;
  }

  /** The density at t; 0 outside [-1, 1]. */
  public double pdf(double t) {
    if (!(Math.abs(t) <= 1)) {
      return 0;
    }
    if (dim == 3) {
      // The exponent is 0: uniform on [-1, 1] (and 0 * log 0 would be NaN at the ends).
      return Math.exp(logNormalization);
    }
    return Math.exp(logNormalization + 0.5 * (dim - 3) * Math.log1p(-t * t));
  }

  /** P(T <= t). */
  public double cdf(double t) {
    if (Double.isNaN(t)) {
      throw new IllegalArgumentException("t must not be NaN");
    }
    if (t <= -1) {
      return 0;
    }
    if (t >= 1) {
      return 1;
    }
    // By symmetry P(T <= t) = P(T >= -t); taking the tail that is small keeps relative accuracy.
    return t <= 0
        ? halfShifted.cumulativeProbability(0.5 * (1 + t))
        : halfShifted.survivalProbability(0.5 * (1 - t));
  }

  /** log P(T <= t), finite for every t > -1 even where the CDF underflows. */
  public double logCdf(double t) {
    double cdf = cdf(t);
    if (cdf >= LOG_SERIES_BELOW) {
      return Math.log(cdf);
    }
    if (t <= -1) {
      return Double.NEGATIVE_INFINITY;
    }
    return logLowerTailSeries(0.5 * (1 + t));
  }

  /**
   * log I_x(a, a) by I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) 2F1(a + b, 1; a + 1; x) (DLMF 8.17.8),
   * whose series has positive terms with ratio below 2x, for the small x where the CDF underflows.
   */
  double logLowerTailSeries(double x) {
    double a = shape;
    double sum = 1;
    double term = 1;
    for (int n = 0; n < MAX_SERIES_TERMS && term > 1e-17 * sum; n++) {
      term *= (2 * a + n) / (a + 1 + n) * x;
      sum += term;
    }
    return a * Math.log(x) + a * Math.log1p(-x) - Math.log(a) - LogBeta.value(a, a) + Math.log(sum);
  }

  /** The t with P(T <= t) = p, for p in [0, 1]. */
  public double ppf(double p) {
    if (!(p >= 0 && p <= 1)) {
      throw new IllegalArgumentException("p must be in [0, 1], was " + p);
    }
    return 2 * halfShifted.inverseCumulativeProbability(p) - 1;
  }
}
