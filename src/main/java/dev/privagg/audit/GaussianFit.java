package dev.privagg.audit;

/**
 * A normal law fitted to canary statistics by moments: the sample mean and the sample standard
 * deviation (divisor n - 1, unbiased variance). The reference code (google-research/federated
 * one_shot_epe) leaves the fit to its callers; with the 100 to 1000 canaries of Andrew et al. the
 * choice of divisor moves the std by at most 0.5%.
 */
public record GaussianFit(double mean, double std) {
  public GaussianFit {
    if (!Double.isFinite(mean)) {
      throw new IllegalArgumentException("mean must be finite, was " + mean);
    }
    if (!(std >= 0 && Double.isFinite(std))) {
      throw new IllegalArgumentException("std must be >= 0 and finite, was " + std);
    }
  }

  /** Mean and sample std of at least two finite samples. */
  public static GaussianFit of(double[] samples) {
    if (samples == null || samples.length < 2) {
      throw new IllegalArgumentException(
          "samples must hold at least 2 values to estimate a std, had "
              + (samples == null ? "null" : samples.length));
    }
    double sum = 0;
    for (int i = 0; i < samples.length; i++) {
      if (!Double.isFinite(samples[i])) {
        throw new IllegalArgumentException(
            "samples must be finite, samples[" + i + "] was " + samples[i]);
      }
      sum += samples[i];
    }
    double mean = sum / samples.length;
    // Two passes: the squares of deviations, not of values, so a large common offset costs nothing.
    double squares = 0;
    for (double x : samples) {
      squares += (x - mean) * (x - mean);
    }
    return new GaussianFit(mean, Math.sqrt(squares / (samples.length - 1)));
  }
}
