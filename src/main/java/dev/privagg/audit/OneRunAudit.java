package dev.privagg.audit;

import dev.privagg.privacy.GaussianCalibration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.function.DoubleUnaryOperator;
import java.util.stream.IntStream;
import org.apache.commons.numbers.gamma.InverseErf;
import org.apache.commons.statistics.distribution.BetaDistribution;
import org.apache.commons.statistics.distribution.BinomialDistribution;
import org.apache.commons.statistics.distribution.NormalDistribution;

/**
 * Lower bounds on epsilon from one training run's canary scores: held-in canaries (in the training
 * data) and held-out ones, where a higher score means "guessed in". Ports the one-run methods of
 * jax_privacy's CanaryScoreAuditor (jax_privacy/auditing.py):
 *
 * <ul>
 *   <li>{@link #epsilonOneRun}: Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training
 *       Run", NeurIPS 2023 (arXiv:2305.08846), one-sided (guesses are only "in");
 *   <li>{@link #epsilonOneRunFdp}: Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy
 *       in One Run", 2024 (arXiv:2410.22235), the audit of the guesses against the Gaussian
 *       trade-off curve of (epsilon, delta), which is tighter.
 * </ul>
 *
 * <p>A guess set is the canaries scoring at or above a threshold. Without an explicit threshold
 * every threshold on the Pareto frontier of the (false negatives, true negatives) curve is tried at
 * significance divided by the frontier's size (Bonferroni), so the bound holds with probability 1 -
 * significance whichever threshold wins. Each bound is the largest epsilon whose (epsilon, delta)
 * claim the guesses reject, found by Brent's method to 1e-6 as the reference does.
 *
 * <p>Immutable; the scores are copied.
 */
public final class OneRunAudit {
  /** The reference's root tolerance on epsilon. */
  private static final double EPSILON_XTOL = 1e-6;

  private static final NormalDistribution STANDARD_NORMAL = NormalDistribution.of(0, 1);

  private final double[] inSorted;
  private final double[] outSorted;
  private final double[] thresholds;
  private final int[] trueNegatives;
  private final int[] falseNegatives;

  /** The bound and the threshold it was reached at (+infinity when no threshold gave one). */
  public record Bound(double epsilon, double threshold) {}

  /**
   * @param inScores attack scores of the held-in canaries, non-empty and finite
   * @param outScores attack scores of the held-out canaries, non-empty and finite
   */
  public OneRunAudit(double[] inScores, double[] outScores) {
    this.inSorted = sortedFiniteCopy("inScores", inScores);
    this.outSorted = sortedFiniteCopy("outScores", outScores);
    // Every distinct score, then +infinity (no guess at all), as thresholds.
    double[] all = new double[inSorted.length + outSorted.length + 1];
    int n = 0;
    int i = 0;
    int j = 0;
    while (i < inSorted.length || j < outSorted.length) {
      double next =
          j == outSorted.length || (i < inSorted.length && inSorted[i] <= outSorted[j])
              ? inSorted[i++]
              : outSorted[j++];
      if (n == 0 || next != all[n - 1]) {
        all[n++] = next;
      }
    }
    all[n++] = Double.POSITIVE_INFINITY;
    // Counts strictly below each threshold: a canary scoring at the threshold is guessed "in".
    double[] fn = new double[n];
    double[] tn = new double[n];
    i = 0;
    j = 0;
    for (int k = 0; k < n; k++) {
      while (i < inSorted.length && inSorted[i] < all[k]) {
        i++;
      }
      while (j < outSorted.length && outSorted[j] < all[k]) {
        j++;
      }
      fn[k] = i;
      tn[k] = j;
    }
    int[] frontier = paretoFrontier(fn, tn);
    this.thresholds = new double[frontier.length];
    this.trueNegatives = new int[frontier.length];
    this.falseNegatives = new int[frontier.length];
    for (int k = 0; k < frontier.length; k++) {
      thresholds[k] = all[frontier[k]];
      trueNegatives[k] = (int) tn[frontier[k]];
      falseNegatives[k] = (int) fn[frontier[k]];
    }
  }

  /** Steinke et al.'s bound, Bonferroni over the frontier's thresholds. */
  public double epsilonOneRun(double significance, double delta) {
    return oneRun(significance, delta).epsilon();
  }

  /** {@link #epsilonOneRun(double, double)} with the threshold that gave it. */
  public Bound oneRun(double significance, double delta) {
    requireArguments(significance, delta);
    return searchThresholds(significance / thresholds.length, delta, false);
  }

  /** Steinke et al.'s bound at one threshold chosen in advance (no Bonferroni correction). */
  public double epsilonOneRun(double significance, double delta, double threshold) {
    requireArguments(significance, delta);
    return atThreshold(significance, delta, threshold, false);
  }

  /** Mahloujifar et al.'s bound, Bonferroni over the frontier's thresholds. */
  public double epsilonOneRunFdp(double significance, double delta) {
    return oneRunFdp(significance, delta).epsilon();
  }

  /** {@link #epsilonOneRunFdp(double, double)} with the threshold that gave it. */
  public Bound oneRunFdp(double significance, double delta) {
    requireArguments(significance, delta);
    return searchThresholds(significance / thresholds.length, delta, true);
  }

  /**
   * Mahloujifar et al.'s bound with a union bound fixed before the scores are seen: a threshold's
   * guesses are the top-k canaries for some k in 0..m, so dividing the significance by m + 1 covers
   * every threshold the search may pick. The frontier's size, which the reference divides by,
   * depends on the scores; this is the bound a verdict can rest on.
   */
  public Bound oneRunFdpFixedUnion(double significance, double delta) {
    requireArguments(significance, delta);
    return searchThresholds(significance / (inSorted.length + outSorted.length + 1), delta, true);
  }

  /** Mahloujifar et al.'s bound at one threshold chosen in advance (no Bonferroni correction). */
  public double epsilonOneRunFdp(double significance, double delta, double threshold) {
    requireArguments(significance, delta);
    return atThreshold(significance, delta, threshold, true);
  }

  /** The frontier's thresholds, increasing, the last +infinity. */
  double[] thresholds() {
    return thresholds.clone();
  }

  /** Held-out canaries below each frontier threshold. */
  int[] trueNegatives() {
    return trueNegatives.clone();
  }

  /** Held-in canaries below each frontier threshold. */
  int[] falseNegatives() {
    return falseNegatives.clone();
  }

  private double atThreshold(double significance, double delta, double threshold, boolean fdp) {
    if (Double.isNaN(threshold)) {
      throw new IllegalArgumentException("threshold must not be NaN");
    }
    int truePositives = inSorted.length - countBelow(inSorted, threshold);
    int falsePositives = outSorted.length - countBelow(outSorted, threshold);
    int m = inSorted.length + outSorted.length;
    int guesses = truePositives + falsePositives;
    return fdp
        ? epsilonForGuessesFdp(0, m, guesses, truePositives, significance, delta)
        : epsilonForGuesses(0, m, guesses, truePositives, significance, delta);
  }

  /**
   * The best bound over the frontier (reference: auditing.py _epsilon_one_run_all_thresholds).
   * Thresholds are tried in decreasing order of a Clopper-Pearson lower bound on their precision,
   * and one whose raw precision is at most logistic(best epsilon so far) is skipped: its guesses
   * could not reject a larger epsilon, and each later search starts from the best so far.
   */
  private Bound searchThresholds(double significance, double delta, boolean fdp) {
    int n = thresholds.length;
    int nPos = inSorted.length;
    int nNeg = outSorted.length;
    int m = nPos + nNeg;
    int[] truePositives = new int[n];
    int[] guesses = new int[n];
    double[] precisionLowerBound = new double[n];
    for (int k = 0; k < n; k++) {
      truePositives[k] = nPos - falseNegatives[k];
      int falsePositives = nNeg - trueNegatives[k];
      guesses[k] = truePositives[k] + falsePositives;
      precisionLowerBound[k] = 1 - clopperPearsonUpper(falsePositives, guesses[k], significance);
    }
    Integer[] order =
        IntStream.range(0, n)
            .boxed()
            .sorted(Comparator.comparingDouble(k -> -precisionLowerBound[k]))
            .toArray(Integer[]::new);
    double best = 0;
    int bestIndex = -1;
    double bestQ = 0.5;
    for (int k : order) {
      if (guesses[k] == 0 || (double) truePositives[k] / guesses[k] <= bestQ) {
        continue;
      }
      double eps =
          fdp
              ? epsilonForGuessesFdp(best, m, guesses[k], truePositives[k], significance, delta)
              : epsilonForGuesses(best, m, guesses[k], truePositives[k], significance, delta);
      if (eps > best) {
        best = eps;
        bestIndex = k;
        bestQ = logistic(best);
      }
    }
    return new Bound(best, bestIndex >= 0 ? thresholds[bestIndex] : thresholds[n - 1]);
  }

  /**
   * The largest epsilon >= epsLo whose (epsilon, delta) claim is rejected at the significance by
   * nCorrect correct guesses out of nGuess among m canaries, or epsLo if none is (reference:
   * auditing.py _epsilon_one_run).
   */
  static double epsilonForGuesses(
      double epsLo, int m, int nGuess, int nCorrect, double significance, double delta) {
    // A claim that survives with delta = 0 survives with delta > 0: skip the search cheaply.
    if (pValue(m, nGuess, nCorrect, epsLo, 0) > significance) {
      return epsLo;
    }
    return rejectedUpTo(
        eps -> significance - pValue(m, nGuess, nCorrect, eps, delta), epsLo, EPSILON_XTOL);
  }

  /**
   * The p-value of nCorrect or more correct guesses among nGuess under an (epsilon, delta) claim
   * with m canaries: a Binomial(nGuess, e^eps / (1 + e^eps)) tail plus 2 m delta times the largest
   * average of the i point masses just below nCorrect (Steinke et al. 2023; reference: auditing.py
   * _one_run_p_value).
   */
  static double pValue(int m, int nGuess, int nCorrect, double eps, double delta) {
    BinomialDistribution guessesRight = BinomialDistribution.of(nGuess, logistic(eps));
    double beta = guessesRight.survivalProbability(nCorrect - 1);
    if (delta == 0) {
      return beta;
    }
    // The reference differences survival functions; summing the masses is the same quantity
    // without cancellation.
    double alpha = 0;
    double mass = 0;
    for (int i = 1; i <= nCorrect; i++) {
      mass += guessesRight.probability(nCorrect - i);
      alpha = Math.max(alpha, mass / i);
    }
    return Math.min(beta + alpha * delta * 2 * m, 1);
  }

  /**
   * As {@link #epsilonForGuesses} under Mahloujifar et al.'s f-DP audit with the Gaussian trade-off
   * curve matching (epsilon, delta) (reference: auditing.py _epsilon_one_run_fdp).
   */
  static double epsilonForGuessesFdp(
      double epsLo, int m, int nGuess, int nCorrect, double significance, double delta) {
    return rejectedUpTo(
        eps -> fdpObjective(m, nGuess, nCorrect, significance, gaussianDpSigma(eps, delta)),
        epsLo,
        EPSILON_XTOL);
  }

  /**
   * Positive when the guesses falsify the trade-off curve of a Gaussian with noise multiplier
   * sigma: the recursion that caps the mass of r correct and h wrong guesses by the curve's blow-up
   * inverse (Mahloujifar et al. 2024, their audit_rh_with_cap; reference: auditing.py
   * _epsilon_one_run_fdp).
   */
  static double fdpObjective(int m, int nGuess, int nCorrect, double significance, double sigma) {
    double r = significance * nCorrect / m;
    double h = significance * (nGuess - nCorrect) / m;
    for (int i = nCorrect - 1; i >= 0; i--) {
      double hNew = Math.max(h, blowUpInverse(r, sigma));
      if (h == hNew) {
        // h is unchanged, so neither h nor r can change afterwards.
        break;
      }
      double rNew = Math.min(r + ((double) i / (nGuess - i)) * (hNew - h), 1.0);
      h = hNew;
      r = rNew;
    }
    return r + h - (double) nGuess / m;
  }

  /**
   * The inverse of the blow-up of mu-Gaussian DP with mu = 1/sigma: {@code Phi(Phi^-1(x) -
   * 1/sigma)} (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, the trade-off function
   * G_mu).
   */
  private static double blowUpInverse(double x, double sigma) {
    if (sigma == 0) {
      return x == 1.0 ? 1 : 0;
    }
    return STANDARD_NORMAL.cumulativeProbability(
        STANDARD_NORMAL.inverseCumulativeProbability(x) - 1 / sigma);
  }

  /**
   * The noise multiplier of a sensitivity-1 Gaussian that is exactly (eps, delta)-DP (Balle and
   * Wang 2018, Theorem 8; dp_accounting's get_sigma_gaussian): 0 when delta is 1 or eps infinite.
   * At eps = 0 delta = 2 Phi(1/(2 sigma)) - 1 gives sigma = 1 / (2 sqrt(2) erfinv(delta)).
   */
  static double gaussianDpSigma(double eps, double delta) {
    if (delta >= 1 || eps == Double.POSITIVE_INFINITY) {
      return 0;
    }
    if (eps == 0) {
      return 1 / (2 * Math.sqrt(2) * InverseErf.value(delta));
    }
    return GaussianCalibration.analyticSigma(eps, delta, 1);
  }

  /**
   * The largest eps >= epsLo with objective(eps) > 0, for an objective decreasing in eps: epsLo if
   * objective(epsLo) <= 0, else a doubling bracket and Brent's method.
   */
  private static double rejectedUpTo(DoubleUnaryOperator objective, double epsLo, double xtol) {
    if (objective.applyAsDouble(epsLo) <= 0) {
      return epsLo;
    }
    double lo = epsLo;
    double hi = Math.max(1.0, 2 * epsLo);
    while (objective.applyAsDouble(hi) > 0) {
      lo = hi;
      hi *= 2;
    }
    return Roots.brent(objective, lo, hi, xtol);
  }

  /**
   * The one-sided Clopper-Pearson upper limit of a rate with k successes in n trials: the (1 -
   * significance)-quantile of Beta(k + 1, n - k), and 1 when k = n.
   */
  static double clopperPearsonUpper(int k, int n, double significance) {
    if (k >= n) {
      return 1;
    }
    return BetaDistribution.of(k + 1.0, n - k).inverseSurvivalProbability(significance);
  }

  /**
   * The indices of the points of a piecewise linear curve (x sorted increasing) that no two outer
   * points weakly dominate: none with j < i < k and x_i = (1 - a) x_j + a x_k, y_i <= (1 - a) y_j +
   * a y_k. Passes drop, all at once, every interior point on or below the chord of its current
   * neighbours, until a pass drops none (reference: auditing.py _pareto_frontier). The
   * cross-products are exact for counts below 9e7.
   */
  static int[] paretoFrontier(double[] x, double[] y) {
    if (x.length != y.length || x.length < 2) {
      throw new IllegalArgumentException(
          "expected at least two points with as many x as y, had "
              + x.length
              + " x and "
              + y.length
              + " y");
    }
    for (int k = 0; k + 1 < x.length; k++) {
      if (!(x[k] <= x[k + 1])) {
        throw new IllegalArgumentException(
            "expected points sorted by x, had x[" + k + "]=" + x[k] + " > x[" + (k + 1) + "]");
      }
    }
    int[] idx = IntStream.range(0, x.length).toArray();
    int size = idx.length;
    boolean[] dominated = new boolean[size];
    while (size > 2) {
      boolean any = false;
      for (int k = 1; k + 1 < size; k++) {
        int prev = idx[k - 1];
        int here = idx[k];
        int next = idx[k + 1];
        double dx1 = x[here] - x[prev];
        double dy1 = y[here] - y[prev];
        double dx2 = x[next] - x[here];
        double dy2 = y[next] - y[here];
        dominated[k] = dy1 * dx2 - dy2 * dx1 <= 0;
        any |= dominated[k];
      }
      if (!any) {
        break;
      }
      int kept = 1;
      for (int k = 1; k + 1 < size; k++) {
        if (!dominated[k]) {
          idx[kept++] = idx[k];
        }
      }
      idx[kept++] = idx[size - 1];
      size = kept;
    }
    return Arrays.copyOf(idx, size);
  }

  /** The logistic function e^eps / (1 + e^eps). */
  private static double logistic(double eps) {
    return 1 / (1 + Math.exp(-eps));
  }

  /** How many of the sorted values lie strictly below t. */
  private static int countBelow(double[] sorted, double t) {
    int lo = 0;
    int hi = sorted.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (sorted[mid] < t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  private static void requireArguments(double significance, double delta) {
    if (!(significance > 0 && significance < 1)) {
      throw new IllegalArgumentException("significance must be in (0, 1), was " + significance);
    }
    if (!(delta > 0 && delta <= 1)) {
      throw new IllegalArgumentException("delta must be in (0, 1], was " + delta);
    }
  }

  private static double[] sortedFiniteCopy(String name, double[] scores) {
    if (scores == null || scores.length == 0) {
      throw new IllegalArgumentException(name + " must be non-empty");
    }
    double[] copy = new double[scores.length];
    for (int i = 0; i < scores.length; i++) {
      if (!Double.isFinite(scores[i])) {
        throw new IllegalArgumentException(
            name + " must be finite, " + name + "[" + i + "] was " + scores[i]);
      }
      // -0.0 + 0.0 is 0.0: one threshold for both zeros, which compare equal as scores.
      copy[i] = scores[i] + 0.0;
    }
    Arrays.sort(copy);
    return copy;
  }
}
