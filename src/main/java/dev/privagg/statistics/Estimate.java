package dev.privagg.statistics;

/**
 * A released statistic and the std of its error from the noise, with a 95% normal interval (exact
 * for the count, sums and histogram counts, whose noise is Gaussian; to first order, by the delta
 * method, for the ratios). The std covers the noise only, not the sampling of clients.
 */
public record Estimate(double value, double std) {
  /** The two-sided 95% normal quantile. */
  public static final double Z95 = 1.959963984540054;

  /** Lower end of the 95% interval. */
  public double lower() {
    return value - Z95 * std;
  }

  /** Upper end of the 95% interval. */
  public double upper() {
    return value + Z95 * std;
  }
}
