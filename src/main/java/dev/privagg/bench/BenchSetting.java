package dev.privagg.bench;

/**
 * One cell of the benchmark grid: updates of {@code dimension} float32 parameters, rounds of {@code
 * clients} updates (the job's m, closing early at m).
 */
public record BenchSetting(int dimension, int clients) {
  public BenchSetting {
    if (dimension < 1) {
      throw new IllegalArgumentException("dimension must be >= 1, was " + dimension);
    }
    if (clients < 1) {
      throw new IllegalArgumentException("clients must be >= 1, was " + clients);
    }
  }

  /** A name usable in job ids and topic names, e.g. {@code d1000000-m100}. */
  public String name() {
    return "d" + dimension + "-m" + clients;
  }

  /** The dimension as people write it: 10k, 1M, 8M. */
  public String dimensionLabel() {
    return dimensionLabel(dimension);
  }

  static String dimensionLabel(int dimension) {
    if (dimension % 1_000_000 == 0) {
      return dimension / 1_000_000 + "M";
    }
    if (dimension % 1_000 == 0) {
      return dimension / 1_000 + "k";
    }
    return Integer.toString(dimension);
  }
}
