package dev.privagg.statistics;

import java.util.Arrays;
import java.util.Locale;

/**
 * A statistic a feature can ask for. All of them are post-processing of three kinds of bounded sums
 * (the row count, a feature's centred sum and sum of squares, its histogram), so asking for more
 * statistics of one kind costs nothing more.
 */
public enum Statistic {
  SUM,
  MEAN,
  VARIANCE,
  STDDEV,
  HISTOGRAM,
  QUANTILES;

  /** The name used in specs and output: lower case. */
  public String specName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The statistic named {@code name} (case ignored), or an error listing the names allowed. */
  public static Statistic parse(String name) {
    for (Statistic s : values()) {
      if (s.specName().equalsIgnoreCase(name)) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "a statistic must be one of "
            + Arrays.stream(values()).map(Statistic::specName).toList()
            + " (count is always released), was '"
            + name
            + "'");
  }

  /** Whether this statistic is computed from the feature's centred sum. */
  boolean needsSum() {
    return this == SUM || this == MEAN || this == VARIANCE || this == STDDEV;
  }

  /** Whether it needs the centred sum of squares too. */
  boolean needsSumOfSquares() {
    return this == VARIANCE || this == STDDEV;
  }

  /** Whether it is read from the histogram. */
  boolean needsHistogram() {
    return this == HISTOGRAM || this == QUANTILES;
  }
}
