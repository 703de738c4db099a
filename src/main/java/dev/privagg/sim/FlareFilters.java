package dev.privagg.sim;

/**
 * What NVIDIA FLARE's statistics privacy filter lets through, with the settings of its federated
 * statistics examples' privacy.json (min_count 10, max_bins_percent 10): a site with fewer than
 * {@code minCount} rows has its statistics dropped, except its count, which FLARE's cleanser never
 * removes; its histogram is dropped when the bins are not fewer than round(rows maxBinsPercent /
 * 100). What passes is exact: no noise, no epsilon. (FLARE's third cleanser widens min and max,
 * which no query here asks for.)
 */
record FlareFilters(int minCount, double maxBinsPercent) {
  /** FLARE's examples' settings (MinCountCleanser, HistogramBinsCleanser). */
  static final FlareFilters EXAMPLES = new FlareFilters(10, 10);

  FlareFilters {
    if (minCount < 0) {
      throw new IllegalArgumentException("minCount must be >= 0, was " + minCount);
    }
    if (!(maxBinsPercent >= 0 && maxBinsPercent <= 100)) {
      throw new IllegalArgumentException(
          "maxBinsPercent must be in [0, 100], was " + maxBinsPercent);
    }
  }

  /** Whether a site of {@code rows} rows releases its sums (MinCountCleanser; counts always). */
  boolean releases(int rows) {
    return rows >= minCount;
  }

  /**
   * Whether such a site releases a histogram of {@code bins} bins (both cleansers); FLARE rounds
   * the limit half to even (Python's round), as Math.rint does.
   */
  boolean releasesHistogram(int rows, int bins) {
    return releases(rows) && bins < Math.rint(rows * maxBinsPercent / 100);
  }
}
