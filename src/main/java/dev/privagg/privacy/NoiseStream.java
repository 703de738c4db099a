package dev.privagg.privacy;

/** A stream of independent standard normal samples for one release. Not thread-safe. */
public interface NoiseStream {
  /** The next N(0, 1) sample. */
  double nextStandardNormal();

  /** The next uniform sample in [0, 1), on a 2^-53 grid (for sampling decisions). */
  double nextUniform();

  /** Adds independent N(0, sigma^2) noise to every coordinate of {@code target}, in order. */
  default void addGaussian(double[] target, double sigma) {
    Checks.nonNegativeFinite("sigma", sigma);
    for (int i = 0; i < target.length; i++) {
      target[i] += sigma * nextStandardNormal();
    }
  }
}
