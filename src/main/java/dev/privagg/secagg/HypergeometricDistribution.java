package dev.privagg.secagg;

/**
 * The number of marked items in a sample of {@code sampled} items drawn without replacement from
 * {@code total} items of which {@code marked} are marked. Port of FCP's {@code
 * HypergeometricDistribution} (fcp/secagg/server/distribution_utilities.cc): the tail sums and the
 * quantile search follow FCP step by step. Single probabilities are evaluated in log space with
 * Loader's saddle-point expansion (as R's {@code dhyper} does) rather than FCP's difference of
 * log-gamma values, which loses about seven digits to cancellation at a million clients.
 *
 * @param total population size, at least 0
 * @param marked marked items in the population, in [0, total]
 * @param sampled sample size, in [0, total]
 */
public record HypergeometricDistribution(int total, int marked, int sampled) {
  private static final double LOG_2PI = Math.log(2 * Math.PI);

  /** Below this size the Stirling series is not accurate enough; the table below is used. */
  private static final int STIRLING_TABLE_SIZE = 16;

  /** ln(m!) - [(m + 1/2) ln m - m + ln(2 pi)/2] for m in [1, STIRLING_TABLE_SIZE). */
  private static final double[] STIRLING_ERROR = stirlingErrorTable();

  /** Checks that the population counts are consistent. */
  public HypergeometricDistribution {
    if (total < 0) {
      throw new IllegalArgumentException("total must be >= 0, was " + total);
    }
    if (marked < 0 || marked > total) {
      throw new IllegalArgumentException(
          "marked must be in [0, total = " + total + "], was " + marked);
    }
    if (sampled < 0 || sampled > total) {
      throw new IllegalArgumentException(
          "sampled must be in [0, total = " + total + "], was " + sampled);
    }
  }

  /** P[X = x]; 0 outside the support. */
  public double pmf(int x) {
    return pmf(x, marked);
  }

  /**
   * ln P[X = x], finite wherever x is in the support, even where {@link #pmf} underflows to 0;
   * negative infinity outside the support.
   */
  public double logPmf(int x) {
    return logPmf(x, marked);
  }

  /** P[X <= x] (x is rounded down), summed from whichever tail is nearer to x. */
  public double cdf(double x) {
    double k = Math.floor(x);
    double mean = marked * (double) sampled / total;
    if (k > mean) {
      // Summing the short upper tail of the unmarked count keeps the result accurate.
      return 1 - lowerTail(sampled - k - 1, total - marked);
    }
    return lowerTail(k, marked);
  }

  /**
   * The quantile rounded away from the median (FCP's {@code FindQuantile(probability)}): for
   * probability at most 1/2, the largest x with P[X <= x] < probability (possibly -1); above 1/2,
   * {@code complementQuantile(1 - probability)}.
   *
   * @param probability in (0, 1)
   */
  public int quantile(double probability) {
    checkProbability(probability);
    return probability > 0.5
        ? upperTailQuantile(1 - probability)
        : lowerTailQuantile(probability, marked);
  }

  /**
   * The quantile of the upper tail rounded away from the median (FCP's {@code
   * FindQuantile(probability, true)}): for probability at most 1/2, the smallest x with P[X > x] <
   * probability; above 1/2, {@code quantile(1 - probability)}. Equivalent to {@code quantile(1 -
   * probability)} but accurate in the extreme upper tail, where 1 - probability would round.
   *
   * @param probability in (0, 1)
   */
  public int complementQuantile(double probability) {
    checkProbability(probability);
    return probability > 0.5
        ? lowerTailQuantile(1 - probability, marked)
        : upperTailQuantile(probability);
  }

  private static void checkProbability(double probability) {
    if (!(probability > 0 && probability < 1)) {
      throw new IllegalArgumentException("probability must be in (0, 1), was " + probability);
    }
  }

  /** The upper tail of X is the lower tail of the unmarked count, sampled - X. */
  private int upperTailQuantile(double probability) {
    return sampled - lowerTailQuantile(probability, total - marked) - 1;
  }

  /**
   * Largest x with P[Y <= x] < probability, Y counting the {@code counted} items. Starts from the
   * largest of two lower bounds (the support's edge and Hoeffding's inverted tail bound) and walks
   * up one value at a time.
   */
  private int lowerTailQuantile(double probability, int counted) {
    double supportBound = (double) counted + sampled - total - 1;
    double hoeffdingBound =
        sampled * ((double) counted / total - Math.sqrt(-Math.log(probability) / (2.0 * sampled)));
    double result = -1;
    if (supportBound > result) {
      result = supportBound;
    }
    // A NaN bound (no sample) fails the comparison and is ignored.
    if (hoeffdingBound > result) {
      result = hoeffdingBound;
    }
    result = Math.floor(result);

    double currentCdf = lowerTail(result, counted);
    double currentPmf = pmf(result, counted);
    while (currentCdf < probability && result < sampled) {
      if (currentPmf > 0) {
        currentPmf /= result + 1;
        currentPmf /= total - counted - sampled + result + 1;
        currentPmf *= counted - result;
        currentPmf *= sampled - result;
      } else {
        currentPmf = pmf(result + 1, counted);
      }
      currentCdf += currentPmf;
      ++result;
    }
    return (int) result - 1;
  }

  /**
   * P[Y <= x], Y counting the {@code counted} items, summed downwards from x until the terms no
   * longer change the sum.
   */
  private double lowerTail(double x, int counted) {
    double currentPmf = pmf(x, counted);
    double result = 0;
    while (currentPmf > result * 1e-16) {
      result += currentPmf;
      currentPmf *= x;
      currentPmf *= total - counted - sampled + x;
      currentPmf /= counted - x + 1;
      currentPmf /= sampled - x + 1;
      --x;
    }
    return result;
  }

  private double pmf(double x, int counted) {
    return Math.exp(logPmf(x, counted));
  }

  /**
   * ln P[Y = x], Y counting the {@code counted} items: with p = sampled / total, the ratio of
   * binomial probabilities b(x; counted, p) b(sampled - x; total - counted, p) / b(sampled; total,
   * p), each accurate to a few ulps relative.
   */
  private double logPmf(double x, int counted) {
    if (x < 0 || x > sampled || x > counted || x < (double) counted + sampled - total) {
      return Double.NEGATIVE_INFINITY;
    }
    double p = (double) sampled / total;
    double q = (double) (total - sampled) / total;
    return logBinomialPmf(x, counted, p, q)
        + logBinomialPmf(sampled - x, total - counted, p, q)
        - logBinomialPmf(sampled, total, p, q);
  }

  /** ln b(x; n, p) for 0 <= x <= n, with q = 1 - p passed in to keep its precision. */
  private static double logBinomialPmf(double x, double n, double p, double q) {
    if (x == 0) {
      if (n == 0) {
        return 0;
      }
      return p < q ? n * Math.log1p(-p) : n * Math.log(q);
    }
    if (x == n) {
      return p < q ? n * Math.log(p) : n * Math.log1p(-q);
    }
    double lc =
        stirlingError(n)
            - stirlingError(x)
            - stirlingError(n - x)
            - deviance(x, n * p)
            - deviance(n - x, n * q);
    double lf = LOG_2PI + Math.log(x) + Math.log1p(-x / n);
    return lc - 0.5 * lf;
  }

  /** x ln(x / mean) + mean - x, by a series when x is near the mean to avoid cancellation. */
  private static double deviance(double x, double mean) {
    if (Math.abs(x - mean) < 0.1 * (x + mean)) {
      double v = (x - mean) / (x + mean);
      double s = (x - mean) * v;
      double term = 2 * x * v;
      v *= v;
      // |v| < 1/10, so each term is 100 times smaller than the last; the bound only guards the
      // loop.
      for (int j = 1; j < 100; j++) {
        term *= v;
        double next = s + term / (2 * j + 1);
        if (next == s) {
          return next;
        }
        s = next;
      }
      return s;
    }
    return x * Math.log(x / mean) + mean - x;
  }

  /** ln(m!) minus its Stirling approximation, for integral m >= 1. */
  private static double stirlingError(double m) {
    if (m < STIRLING_TABLE_SIZE) {
      return STIRLING_ERROR[(int) m];
    }
    double mm = m * m;
    double s0 = 1.0 / 12;
    double s1 = 1.0 / 360;
    double s2 = 1.0 / 1260;
    double s3 = 1.0 / 1680;
    double s4 = 1.0 / 1188;
    if (m > 500) {
      return (s0 - s1 / mm) / m;
    }
    if (m > 80) {
      return (s0 - (s1 - s2 / mm) / mm) / m;
    }
    if (m > 35) {
      return (s0 - (s1 - (s2 - s3 / mm) / mm) / mm) / m;
    }
    return (s0 - (s1 - (s2 - (s3 - s4 / mm) / mm) / mm) / mm) / m;
  }

  private static double[] stirlingErrorTable() {
    double[] table = new double[STIRLING_TABLE_SIZE];
    double factorial = 1;
    for (int m = 1; m < STIRLING_TABLE_SIZE; m++) {
      factorial *= m; // exact: 15! < 2^53
      table[m] = Math.log(factorial) - (m + 0.5) * Math.log(m) + m - 0.5 * LOG_2PI;
    }
    return table;
  }
}
