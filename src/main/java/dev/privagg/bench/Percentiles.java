package dev.privagg.bench;

import java.util.Arrays;

/** Nearest-rank percentiles of a small sample (with 20 values, p99 is the largest). */
public final class Percentiles {
  private Percentiles() {}

  /** The smallest value with at least {@code p} percent of the sample at or below it. */
  public static double of(double[] sample, double p) {
    if (sample.length == 0) {
      throw new IllegalArgumentException("sample must not be empty");
    }
    if (!(p > 0 && p <= 100)) {
      throw new IllegalArgumentException("p must be in (0, 100], was " + p);
    }
    double[] sorted = sample.clone();
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[rank - 1];
  }
}
