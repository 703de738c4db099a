package dev.privagg.audit;

import dev.privagg.privacy.LogMath;
import java.util.Arrays;
import org.apache.commons.statistics.distribution.BetaDistribution;
import org.apache.commons.statistics.distribution.NormalDistribution;

/**
 * Epsilon from canary statistics, as in Andrew et al., "One-shot Empirical Privacy Estimation for
 * Federated Learning" (ICLR 2024): random canary clients are inserted into training, and the cosine
 * between each canary's update and the final model delta is the statistic. Canaries that were seen
 * shift the cosine up; unseen ones give the null law, known in closed form ({@link ClosedFormNull},
 * about N(0, 1/dim)).
 *
 * <ul>
 *   <li>{@link #epsilonTwoGaussians} and its users are estimates, not bounds: the exact epsilon
 *       between two fitted laws, as if a mechanism's outputs on neighbouring inputs followed them;
 *   <li>{@link #optimalEpsilonLowerBound} and {@link #optimalEpsilonLowerBoundClosedFormNull} are
 *       high-confidence lower bounds from error rates at a threshold (Jagielski, Ullman, Oprea,
 *       "Auditing Differentially Private Machine Learning", NeurIPS 2020), with Jeffreys intervals.
 * </ul>
 *
 * <p>Checked against the published values of the reference (google-research/federated
 * one_shot_epe/empirical_privacy_estimation_lib.py and its test).
 */
public final class OneShotEstimate {
  /** From this dimension on, N(0, 1/dim) stands for the exact null law (as the reference does). */
  public static final int GAUSSIAN_NULL_DIM = 1000;

  /** Points on the threshold grid of the closed-form null with a Gaussian alternative. */
  private static final int THRESHOLD_GRID = 10_000;

  /** The reference's root tolerance (scipy brentq's default xtol). */
  private static final double EPSILON_XTOL = 2e-12;

  /** Past this the bracket search stops and reports an infinite epsilon instead of looping. */
  private static final double MAX_EPSILON = 1e300;

  private OneShotEstimate() {}

  /**
   * The estimate of Andrew et al. with an empirical null: normals fitted ({@link GaussianFit}) to
   * the unseen and the seen canaries' statistics, then {@link #epsilonTwoGaussians}.
   */
  public static double epsilonHat(double[] seen, double[] unseen, double delta) {
    GaussianFit altLaw = GaussianFit.of(seen);
    GaussianFit nullLaw = GaussianFit.of(unseen);
    return epsilonTwoGaussians(nullLaw.mean(), nullLaw.std(), altLaw.mean(), altLaw.std(), delta);
  }

  /**
   * The smallest epsilon at which the pair N(mu1, std1^2), N(mu2, std2^2) is (epsilon,
   * delta)-indistinguishable in both directions: delta(eps) = P[L > eps] - e^eps P'[L > eps] for
   * the privacy loss L = log(p1/p2), under each ordering (Steinke, "Composition of Differential
   * Privacy & Privacy Amplification by Subsampling", 2022, arXiv:2210.00597), solved for the target
   * delta by Brent's method on log delta. Identical laws give 0.
   */
  public static double epsilonTwoGaussians(
      double mu1, double std1, double mu2, double std2, double delta) {
    requireFinite("mu1", mu1);
    requirePositiveStd("std1", std1);
    requireFinite("mu2", mu2);
    requirePositiveStd("std2", std2);
    requireOpenUnit("delta", delta);
    double logDelta = Math.log(delta);
    if (maxLogDelta(mu1, std1, mu2, std2, 0) <= logDelta) {
      return 0;
    }
    double lo = 0;
    double hi = 1;
    while (maxLogDelta(mu1, std1, mu2, std2, hi) > logDelta) {
      lo = hi;
      hi *= 10;
      if (hi > MAX_EPSILON) {
        return Double.POSITIVE_INFINITY;
      }
    }
    return Roots.brent(
        eps -> maxLogDelta(mu1, std1, mu2, std2, eps) - logDelta, lo, hi, EPSILON_XTOL);
  }

  private static double maxLogDelta(double mu1, double std1, double mu2, double std2, double eps) {
    return Math.max(
        logDeltaTwoGaussians(mu1, std1, mu2, std2, eps),
        logDeltaTwoGaussians(mu2, std2, mu1, std1, eps));
  }

  /**
   * log delta(eps) of the pair in one direction. The privacy loss at y is the quadratic {@code a
   * y^2 + b y + c}, so {L > eps} is one side of a threshold when the stds are equal and inside or
   * outside the two roots of {@code a y^2 + b y + c - eps} otherwise (reference:
   * google-research/federated one_shot_epe/empirical_privacy_estimation_lib.py
   * _log_delta_two_gaussians).
   */
  static double logDeltaTwoGaussians(double mu1, double std1, double mu2, double std2, double eps) {
    double a = 0.5 * (1 / (std2 * std2) - 1 / (std1 * std1));
    double b = mu1 / (std1 * std1) - mu2 / (std2 * std2);
    double c =
        0.5 * ((mu2 / std2) * (mu2 / std2) - (mu1 / std1) * (mu1 / std1))
            + Math.log(std2)
            - Math.log(std1);
    // logP1 = log P[L > eps] under N(mu1, std1^2); logP2 the same under N(mu2, std2^2).
    double logP1;
    double logP2;
    if (std1 == std2) {
      if (b == 0) {
        // Same law: L is 0 everywhere, so delta is 0 at every eps >= 0.
        return Double.NEGATIVE_INFINITY;
      }
      double t = (eps - c) / b;
      // L > eps is y > t when b > 0 and y < t when b < 0. (The reference takes y > t in both
      // cases; for b < 0 that direction's delta then comes out vacuous and the other direction,
      // equal by symmetry, gives the answer, so the maximum over directions is the same.)
      double sign = b > 0 ? 1 : -1;
      logP1 = LogMath.logNormalCdf(sign * (mu1 - t) / std1);
      logP2 = LogMath.logNormalCdf(sign * (mu2 - t) / std2);
    } else {
      double discriminant = b * b - 4 * a * (c - eps);
      if (discriminant <= 0) {
        // L - eps has one sign everywhere: both probabilities are 1 or both are 0, delta <= 0.
        return Double.NEGATIVE_INFINITY;
      }
      // The roots without cancellation (Numerical Recipes 5.6): q = -(b + sign(b) sqrt(D)) / 2,
      // roots q / a and (c - eps) / q; the textbook formula loses the small root when a is tiny.
      double q = -0.5 * (b + Math.copySign(Math.sqrt(discriminant), b));
      double r1 = q / a;
      double r2 = (c - eps) / q;
      double left = Math.min(r1, r2);
      double right = Math.max(r1, r2);
      if (a > 0) {
        // Opens upward: L > eps outside the roots.
        logP1 = logMassOutside(left, right, mu1, std1);
        logP2 = logMassOutside(left, right, mu2, std2);
      } else {
        // Opens downward: L > eps between the roots.
        logP1 = logMassBetween(left, right, mu1, std1);
        logP2 = logMassBetween(left, right, mu2, std2);
      }
    }
    double factor = eps + logP2 - logP1;
    if (!(factor < 0)) {
      // delta <= 0: vacuous in this direction.
      return Double.NEGATIVE_INFINITY;
    }
    return logP1 + Math.log1p(-Math.exp(factor));
  }

  /** log P[Y < left or Y > right] for Y ~ N(mu, std^2). */
  private static double logMassOutside(double left, double right, double mu, double std) {
    return LogMath.logAdd(
        LogMath.logNormalCdf((left - mu) / std), LogMath.logNormalCdf((mu - right) / std));
  }

  /** log(e^a - e^b), -infinity when rounding left a <= b (a mass of 0). */
  private static double massDifference(double a, double b) {
    return a > b ? LogMath.logSub(a, b) : Double.NEGATIVE_INFINITY;
  }

  /** log P[left < Y < right] for Y ~ N(mu, std^2), from the tail on the far side of mu. */
  private static double logMassBetween(double left, double right, double mu, double std) {
    double zl = (left - mu) / std;
    double zr = (right - mu) / std;
    if (zl > 0) {
      // Both above the mean: Phi(-zl) - Phi(-zr) keeps the relative accuracy of the upper tail.
      return massDifference(LogMath.logNormalCdf(-zl), LogMath.logNormalCdf(-zr));
    }
    return massDifference(LogMath.logNormalCdf(zr), LogMath.logNormalCdf(zl));
  }

  /**
   * The estimate of Andrew et al. (Sec. 4) from the closed-form null and a normal fitted to the
   * seen canaries' cosines: from dim 1000 on, {@link #epsilonTwoGaussians} with N(0, 1/dim) as the
   * null; below, the best error-rate bound {@code max(log((1 - delta - FNR)/FPR), log((1 - delta -
   * FPR)/FNR))} over 10,000 thresholds between the null's delta-quantile and the alternative's (1 -
   * delta)-quantile, with the exact null FPR and the Gaussian FNR (reference:
   * empirical_privacy_estimation_lib.py epsilon_closed_form_null_gaussian_alt).
   *
   * @param mu mean of the seen canaries' cosines; must be > 0 below dim 1000
   * @param std their std
   */
  public static double epsilonClosedFormNullGaussianAlt(
      double mu, double std, int dim, double delta) {
    requireFinite("mu", mu);
    requirePositiveStd("std", std);
    requireDim(dim);
    requireOpenUnit("delta", delta);
    if (dim >= GAUSSIAN_NULL_DIM) {
      return epsilonTwoGaussians(0, Math.pow(dim, -0.5), mu, std, delta);
    }
    if (!(mu > 0)) {
      // The threshold grid assumes seen canaries score above unseen ones (mean 0).
      throw new IllegalArgumentException(
          "mu must be > 0 below dim " + GAUSSIAN_NULL_DIM + ", was " + mu);
    }
    ClosedFormNull nullLaw = new ClosedFormNull(dim);
    // Outside [lb, ub] one of the rates exceeds 1 - delta and the bound is void.
    double lb = nullLaw.ppf(delta);
    double ub = mu + std * NormalDistribution.of(0, 1).inverseSurvivalProbability(delta);
    double step = (ub - lb) / (THRESHOLD_GRID - 1);
    double best = 0;
    for (int i = 0; i < THRESHOLD_GRID; i++) {
      double t = i == THRESHOLD_GRID - 1 ? ub : lb + i * step;
      // FPR(t) = P[T0 >= t] = P[T0 <= -t] by symmetry.
      double logFpr = nullLaw.logCdf(-t);
      double logFnr = LogMath.logNormalCdf((t - mu) / std);
      best = Math.max(best, epsilonFromRates(logFpr, logFnr, delta));
    }
    return best;
  }

  /**
   * A lower bound on epsilon holding with probability at least 1 - alpha: at each threshold, the
   * Jeffreys one-sided upper confidence limits of the false positive rate (unseen at or above the
   * threshold) and false negative rate (seen below it) in {@code max(log((1 - delta - FNR)/FPR),
   * log((1 - delta - FPR)/FNR))}, maximized over thresholds (Jagielski et al. 2020 with Jeffreys
   * instead of Clopper-Pearson intervals; reference: empirical_privacy_estimation_lib.py
   * optimal_epsilon_lower_bound). At equal values an unseen canary sorts before a seen one, as the
   * reference's complex sort orders them.
   *
   * <p>The reference would return NaN if at some threshold both rates' limits exceeded 1 - delta;
   * such a threshold counts as 0 here.
   *
   * @param alpha allowed failure probability, in (0, 0.5)
   * @param delta in [0, 1)
   */
  public static double optimalEpsilonLowerBound(
      double[] seen, double[] unseen, double alpha, double delta) {
    double[] s = sortedFiniteCopy("seen", seen);
    double[] u = sortedFiniteCopy("unseen", unseen);
    requireAlpha(alpha);
    requireDeltaBelowOne(delta);
    int ns = s.length;
    int nu = u.length;
    double[] logFprByCount = new double[nu + 1];
    for (int k = 0; k <= nu; k++) {
      logFprByCount[k] = Math.log(jeffreysHigh(k, nu, alpha));
    }
    double[] logFnrByCount = new double[ns + 1];
    for (int k = 0; k <= ns; k++) {
      logFnrByCount[k] = Math.log(jeffreysHigh(k, ns, alpha));
    }
    // Walk the merged order; before position i, i canaries are below the threshold.
    int i = 0;
    int j = 0;
    double best = epsilonFromRates(logFprByCount[nu], logFnrByCount[0], delta);
    while (i < ns || j < nu) {
      if (j < nu && (i == ns || u[j] <= s[i])) {
        j++;
      } else {
        i++;
      }
      best = Math.max(best, epsilonFromRates(logFprByCount[nu - j], logFnrByCount[i], delta));
    }
    return best;
  }

  /**
   * {@link #optimalEpsilonLowerBound} with the closed-form null's exact FPR instead of unseen
   * canaries (Andrew et al., Sec. 4): thresholds at the seen cosines, the one at the i-th smallest
   * (from 0) having i false negatives; the exact null below dim 1000, N(0, 1/dim) from there on
   * (reference: empirical_privacy_estimation_lib.py optimal_epsilon_lower_bound_closed_form_null).
   */
  public static double optimalEpsilonLowerBoundClosedFormNull(
      double[] seenCosines, int dim, double alpha, double delta) {
    double[] t = sortedFiniteCopy("seenCosines", seenCosines);
    for (double x : t) {
      if (!(Math.abs(x) <= 1)) {
        throw new IllegalArgumentException("seenCosines must be in [-1, 1], had " + x);
      }
    }
    requireDim(dim);
    requireAlpha(alpha);
    requireDeltaBelowOne(delta);
    ClosedFormNull nullLaw = dim < GAUSSIAN_NULL_DIM ? new ClosedFormNull(dim) : null;
    double scale = Math.pow(dim, -0.5);
    int n = t.length;
    double best = 0;
    for (int i = 0; i < n; i++) {
      // FPR(t) = P[T0 >= t] = P[T0 <= -t].
      double logFpr = nullLaw != null ? nullLaw.logCdf(-t[i]) : LogMath.logNormalCdf(-t[i] / scale);
      double logFnr = Math.log(jeffreysHigh(i, n, alpha));
      best = Math.max(best, epsilonFromRates(logFpr, logFnr, delta));
    }
    return best;
  }

  /**
   * The (epsilon, delta) hypothesis-testing bound {@code max(log((1 - delta - FNR)/FPR), log((1 -
   * delta - FPR)/FNR))} from one threshold's rates (the hypothesis-testing view of DP, Kairouz, Oh,
   * Viswanath, ICML 2015, as Jagielski et al. 2020 use it), clipped at 0; a side whose rate reaches
   * 1 - delta gives no bound (reference: _epsilon_lower_bound). The rates come as logs, so the tiny
   * tails of the closed-form null and of a Gaussian alternative keep their precision (the reference
   * takes the FNR linearly, which underflows to an infinite bound in far tails).
   */
  static double epsilonFromRates(double logFpr, double logFnr, double delta) {
    double fromFpr = Math.log(1 - delta - Math.exp(logFnr)) - logFpr;
    double fromFnr = Math.log(1 - delta - Math.exp(logFpr)) - logFnr;
    double best = 0;
    // NaN (a side with rate above 1 - delta) compares false and is skipped.
    if (fromFpr > best) {
      best = fromFpr;
    }
    if (fromFnr > best) {
      best = fromFnr;
    }
    return best;
  }

  /**
   * The Jeffreys one-sided upper confidence limit of a binomial rate with k successes in n trials:
   * the (1 - alpha)-quantile of Beta(k + 1/2, n - k + 1/2) (the Jeffreys interval of Brown, Cai,
   * DasGupta, "Interval Estimation for a Binomial Proportion", Statistical Science 2001).
   */
  static double jeffreysHigh(int k, int n, double alpha) {
    return BetaDistribution.of(k + 0.5, n - k + 0.5).inverseSurvivalProbability(alpha);
  }

  private static double[] sortedFiniteCopy(String name, double[] values) {
    if (values == null || values.length == 0) {
      throw new IllegalArgumentException(name + " must be non-empty");
    }
    double[] copy = values.clone();
    for (int i = 0; i < copy.length; i++) {
      if (!Double.isFinite(copy[i])) {
        throw new IllegalArgumentException(
            name + " must be finite, " + name + "[" + i + "] was " + copy[i]);
      }
    }
    Arrays.sort(copy);
    return copy;
  }

  private static void requireFinite(String name, double value) {
    if (!Double.isFinite(value)) {
      throw new IllegalArgumentException(name + " must be finite, was " + value);
    }
  }

  private static void requirePositiveStd(String name, double value) {
    if (!(value > 0 && Double.isFinite(value))) {
      throw new IllegalArgumentException(name + " must be > 0 and finite, was " + value);
    }
  }

  private static void requireOpenUnit(String name, double value) {
    if (!(value > 0 && value < 1)) {
      throw new IllegalArgumentException(name + " must be in (0, 1), was " + value);
    }
  }

  private static void requireDeltaBelowOne(double delta) {
    if (!(delta >= 0 && delta < 1)) {
      throw new IllegalArgumentException("delta must be in [0, 1), was " + delta);
    }
  }

  private static void requireAlpha(double alpha) {
    if (!(alpha > 0 && alpha < 0.5)) {
      throw new IllegalArgumentException(
          "alpha (the allowed failure probability) must be in (0, 0.5), was " + alpha);
    }
  }

  private static void requireDim(int dim) {
    if (dim < 2) {
      throw new IllegalArgumentException("dim must be >= 2, was " + dim);
    }
  }
}
