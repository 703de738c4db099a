package dev.privagg.privacy;

/**
 * The Gaussian mechanism on a sum of clipped updates (design.md invariant 2): each coordinate gets
 * independent N(0, sigma^2) noise with {@code sigma = noiseMultiplier * clipNorm}, since the sum's
 * L2 sensitivity under add/remove-one-client is the clip norm (Abadi et al. 2016, Sec. 3.1; McMahan
 * et al. 2018, Alg. 1).
 */
public record GaussianMechanism(double noiseMultiplier, double clipNorm) {
  /** Validates the parameters; a noise multiplier of 0 is allowed (no privacy). */
  public GaussianMechanism {
    Checks.nonNegativeFinite("noiseMultiplier", noiseMultiplier);
    Checks.positiveFinite("clipNorm", clipNorm);
  }

  /** Absolute std of the noise per coordinate. */
  public double sigma() {
    return noiseMultiplier * clipNorm;
  }

  /**
   * The noise of one release, drawn ahead of the sum it goes on (it does not depend on the data):
   * adding it to a sum gives the same doubles as {@link #addNoise} on the same stream.
   */
  public double[] noise(int dimension, NoiseStream noise) {
    double[] out = new double[dimension];
    addNoise(out, noise);
    return out;
  }

  /** Adds the noise to {@code sum} in place. */
  public void addNoise(double[] sum, NoiseStream noise) {
    if (noiseMultiplier > 0) {
      noise.addGaussian(sum, sigma());
    }
  }
}
