package dev.privagg.statistics;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One numeric feature of a statistics job: its public bounds [lo, hi] (values are clipped into
 * them), the statistics wanted, public histogram bin edges and quantile levels. The bounds and
 * edges are public parameters of the query, never read from the data.
 *
 * @param binEdges increasing edges from lo to hi (bin j is [e_j, e_j+1), the last one closed);
 *     empty unless a histogram or quantiles are wanted
 * @param quantileLevels levels in (0, 1), increasing; empty unless quantiles are wanted
 * @param weight this feature's share of the budget relative to the others
 */
public record Feature(
    String name,
    double lo,
    double hi,
    Set<Statistic> statistics,
    double[] binEdges,
    double[] quantileLevels,
    double weight)
    implements java.io.Serializable {

  /** Most bins one histogram may have. */
  public static final int MAX_BINS = 1 << 16;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

  /** Validates every rule, naming the feature, the parameter and what is allowed. */
  public Feature {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "a feature name must be 1-100 letters, digits, '.', '_' or '-', starting with a letter"
              + " or digit, was '"
              + name
              + "'");
    }
    if (!(Double.isFinite(lo) && Double.isFinite(hi) && lo < hi)) {
      throw new IllegalArgumentException(
          "feature " + name + ": bounds must be finite with lo < hi, was [" + lo + ", " + hi + "]");
    }
    if (!(Math.abs(lo) <= 1e100 && Math.abs(hi) <= 1e100 && hi - lo >= 2e-100)) {
      // The sum of squares' sensitivity, maxRows h^2 / 2, and its scale must stay normal doubles.
      throw new IllegalArgumentException(
          "feature "
              + name
              + ": bounds must lie within +-1e100 and at least 2e-100 apart, was ["
              + lo
              + ", "
              + hi
              + "]");
    }
    if (statistics == null || statistics.isEmpty()) {
      throw new IllegalArgumentException(
          "feature "
              + name
              + ": statistics must name at least one of "
              + Arrays.stream(Statistic.values()).map(Statistic::specName).toList());
    }
    statistics = Set.copyOf(EnumSet.copyOf(statistics));
    binEdges = binEdges == null ? new double[0] : binEdges.clone();
    quantileLevels = quantileLevels == null ? new double[0] : quantileLevels.clone();
    boolean histogram = statistics.stream().anyMatch(Statistic::needsHistogram);
    if (histogram) {
      checkEdges(name, lo, hi, binEdges);
    } else if (binEdges.length > 0) {
      throw new IllegalArgumentException(
          "feature " + name + ": binEdges are read only with the histogram or quantiles statistic");
    }
    if (statistics.contains(Statistic.QUANTILES)) {
      checkLevels(name, quantileLevels);
    } else if (quantileLevels.length > 0) {
      throw new IllegalArgumentException(
          "feature " + name + ": quantile levels are read only with the quantiles statistic");
    }
    if (!(weight > 0 && weight <= 1e6)) {
      throw new IllegalArgumentException(
          "feature " + name + ": weight must be in (0, 1e6], was " + weight);
    }
  }

  private static void checkEdges(String name, double lo, double hi, double[] edges) {
    if (edges.length < 2 || edges.length > MAX_BINS + 1) {
      throw new IllegalArgumentException(
          "feature "
              + name
              + ": binEdges must hold 2 to "
              + (MAX_BINS + 1)
              + " edges (histogram and quantiles need them), was "
              + edges.length);
    }
    if (edges[0] != lo || edges[edges.length - 1] != hi) {
      throw new IllegalArgumentException(
          "feature "
              + name
              + ": binEdges must start at the lower bound "
              + lo
              + " and end at the upper bound "
              + hi
              + " (values are clipped into the bounds, so the bins cover them), was "
              + edges[0]
              + " to "
              + edges[edges.length - 1]);
    }
    for (int j = 1; j < edges.length; j++) {
      if (!(edges[j] > edges[j - 1])) {
        throw new IllegalArgumentException(
            "feature "
                + name
                + ": binEdges must increase strictly, was "
                + edges[j - 1]
                + " then "
                + edges[j]);
      }
    }
  }

  private static void checkLevels(String name, double[] levels) {
    if (levels.length == 0) {
      throw new IllegalArgumentException(
          "feature " + name + ": quantiles needs levels in (0, 1), e.g. [0.25, 0.5, 0.75]");
    }
    for (int i = 0; i < levels.length; i++) {
      if (!(levels[i] > 0 && levels[i] < 1) || (i > 0 && !(levels[i] > levels[i - 1]))) {
        throw new IllegalArgumentException(
            "feature "
                + name
                + ": quantile levels must be in (0, 1) and increase strictly, was "
                + Arrays.toString(levels));
      }
    }
  }

  /** Half the bounds' width, h: a clipped value lies within h of the midpoint. */
  public double halfWidth() {
    return (hi - lo) / 2;
  }

  /** The midpoint the sums are centred on. */
  public double midpoint() {
    return lo + (hi - lo) / 2;
  }

  /** Whether a statistic of the feature needs its centred sum. */
  public boolean hasSum() {
    return statistics.stream().anyMatch(Statistic::needsSum);
  }

  /** Whether a statistic needs its centred sum of squares. */
  public boolean hasSumOfSquares() {
    return statistics.stream().anyMatch(Statistic::needsSumOfSquares);
  }

  /** Whether a statistic needs its histogram. */
  public boolean hasHistogram() {
    return statistics.stream().anyMatch(Statistic::needsHistogram);
  }

  /** Number of histogram bins (0 without one). */
  public int bins() {
    return hasHistogram() ? binEdges.length - 1 : 0;
  }

  /** {@code value} clipped into [lo, hi]. */
  public double clip(double value) {
    return Math.min(hi, Math.max(lo, value));
  }

  /** The bin a clipped value falls into: [e_j, e_j+1), the last bin closed at hi. */
  public int bin(double clipped) {
    // + 0.0 turns -0.0 into 0.0, which binarySearch would otherwise order below an edge at 0.
    int j = Arrays.binarySearch(binEdges, clipped + 0.0);
    int index = j >= 0 ? j : -j - 2;
    return Math.min(index, binEdges.length - 2);
  }

  @Override
  public double[] binEdges() {
    return binEdges.clone();
  }

  @Override
  public double[] quantileLevels() {
    return quantileLevels.clone();
  }
}
