package dev.privagg.sim;

/**
 * What NVIDIA FLARE's statistics privacy filter lets through, with the settings of its federated
 * statistics examples (privacy.json: min_count 10, max_bins_percent 10): a site's statistics are
 * dropped when it holds fewer than {@code minCount} rows, and its histogram when the bins are not
 * fewer than {@code maxBinsPercent} percent of its rows. What passes is exact: no noise, no
 * epsilon. (FLARE's third cleanser widens min and max, which no query here asks for.)
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

  /** Whether a site of {@code rows} rows releases any statistic (MinCountCleanser). */
  boolean releases(int rows) {
    return rows >= minCount;
  }

  /** Whether such a site releases a histogram of {@code bins} bins (both cleansers). */
  boolean releasesHistogram(int rows, int bins) {
    return releases(rows) && bins < rows * maxBinsPercent / 100;
  }
}
