package dev.privagg.privacy;

import java.util.random.RandomGenerator;

/** A stream of independent standard normal samples for one release. Not thread-safe. */
public interface NoiseStream {
  /** The next N(0, 1) sample. */
  double nextStandardNormal();

  /** The next uniform sample in [0, 1), on a 2^-53 grid (for sampling decisions). */
  double nextUniform();

  /**
   * This stream as uniform 64-bit words for exact samplers ({@link DiscreteGaussian}): each word is
   * the top 32 bits of two uniforms, which are exact on their 2^-53 grid.
   */
  default RandomGenerator bits() {
    return () -> ((long) (nextUniform() * 0x1p32) << 32) | (long) (nextUniform() * 0x1p32);
  }

  /** Adds independent N(0, sigma^2) noise to every coordinate of {@code target}, in order. */
  default void addGaussian(double[] target, double sigma) {
    Checks.nonNegativeFinite("sigma", sigma);
    for (int i = 0; i < target.length; i++) {
      target[i] += sigma * nextStandardNormal();
    }
  }
}
