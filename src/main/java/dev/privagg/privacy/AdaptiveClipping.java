package dev.privagg.privacy;

import java.io.Serializable;

/**
 * Adaptive clipping to a target quantile of the update norms: Andrew, Thakkar, McMahan, Ramaswamy,
 * "Differentially Private Learning with Adaptive Clipping", NeurIPS 2021, Algorithm 1.
 *
 * <p>Each client reports b_i = 1 if its update norm is <= C_t (it was NOT clipped), else 0. The
 * server releases the noisy unclipped fraction
 *
 * <pre>
 *   b~ = (sum_i (b_i - 1/2) + N(0, sigma_b^2) + m/2) / m
 * </pre>
 *
 * with m the expected cohort size, a public constant, so the denominator does not depend on the
 * data. Summing b_i - 1/2 gives each client a contribution of +-1/2, so the count has sensitivity
 * 1/2 under add/remove; that is what makes the joint charge of {@link #jointNoiseMultiplier} right
 * (Sec. 3.1). The clip norm then follows Algorithm 1's geometric update
 *
 * <pre>
 *   C_{t+1} = C_t exp(-eta_C (b~ - gamma))
 * </pre>
 *
 * so C grows when fewer than gamma of the updates were unclipped and shrinks when more were. (A
 * count of CLIPPED updates in place of b~ would move C the wrong way.) The result is clamped to
 * [minClipNorm, maxClipNorm]: post-processing of a public value, which keeps C finite and positive
 * however long the run and whatever the noise.
 *
 * @param targetQuantile gamma, the fraction of updates meant to be unclipped, in (0, 1)
 * @param learningRate eta_C of the geometric update
 * @param initialClipNorm C_0
 * @param countNoiseStd sigma_b, the absolute std of the noise on the unclipped count
 * @param minClipNorm lower clamp of C
 * @param maxClipNorm upper clamp of C
 */
public record AdaptiveClipping(
    double targetQuantile,
    double learningRate,
    double initialClipNorm,
    double countNoiseStd,
    double minClipNorm,
    double maxClipNorm)
    implements Serializable {

  /** The paper's eta_C = 0.2 (Andrew et al. 2021, the learning rate of its experiments). */
  public static final double DEFAULT_LEARNING_RATE = 0.2;

  /** Validates: 0 < minClipNorm <= initialClipNorm <= maxClipNorm < infinity, and the rest. */
  public AdaptiveClipping {
    Checks.openUnitInterval("targetQuantile", targetQuantile);
    Checks.positiveFinite("learningRate", learningRate);
    Checks.positiveFinite("initialClipNorm", initialClipNorm);
    Checks.positiveFinite("countNoiseStd", countNoiseStd);
    Checks.positiveFinite("minClipNorm", minClipNorm);
    Checks.positiveFinite("maxClipNorm", maxClipNorm);
    if (!(minClipNorm <= initialClipNorm)) {
      throw new IllegalArgumentException(
          "minClipNorm must be <= initialClipNorm (" + initialClipNorm + "), was " + minClipNorm);
    }
    if (!(maxClipNorm >= initialClipNorm)) {
      throw new IllegalArgumentException(
          "maxClipNorm must be >= initialClipNorm (" + initialClipNorm + "), was " + maxClipNorm);
    }
  }

  /** Clamps C to [initialClipNorm / 1000, initialClipNorm * 1000]. */
  public static AdaptiveClipping of(
      double targetQuantile, double learningRate, double initialClipNorm, double countNoiseStd) {
    return new AdaptiveClipping(
        targetQuantile,
        learningRate,
        initialClipNorm,
        countNoiseStd,
        initialClipNorm / 1000,
        initialClipNorm * 1000);
  }

  /** The paper's suggestion sigma_b = m / 20 (Andrew et al. 2021, Sec. 3). */
  public static double defaultCountNoiseStd(int expectedClients) {
    Checks.atLeastOne("expectedClients", expectedClients);
    return expectedClients / 20.0;
  }

  /**
   * b~ = (unclipped - contributions / 2 + countNoiseStd * standardNormal + m / 2) / m (Algorithm
   * 1), with {@code standardNormal} one N(0, 1) draw from the round's noise stream and m = {@code
   * expectedClients}. With no contributions at all, b~ = 1/2 + noise / m: still a valid release.
   */
  public double noisyUnclippedFraction(
      long unclipped, long contributions, double standardNormal, int expectedClients) {
    Checks.atLeastOne("expectedClients", expectedClients);
    if (!(unclipped >= 0 && unclipped <= contributions)) {
      throw new IllegalArgumentException(
          "unclipped must be in [0, contributions = " + contributions + "], was " + unclipped);
    }
    if (!Double.isFinite(standardNormal)) {
      throw new IllegalArgumentException("standardNormal must be finite, was " + standardNormal);
    }
    double m = expectedClients;
    double shiftedCount = unclipped - contributions / 2.0; // sum_i (b_i - 1/2)
    return (shiftedCount + countNoiseStd * standardNormal + m / 2) / m;
  }

  /** C_{t+1} = C_t exp(-eta_C (b~ - gamma)), clamped to [minClipNorm, maxClipNorm]. */
  public double nextClipNorm(double clipNorm, double noisyUnclippedFraction) {
    Checks.positiveFinite("clipNorm", clipNorm);
    if (!Double.isFinite(noisyUnclippedFraction)) {
      throw new IllegalArgumentException(
          "noisyUnclippedFraction must be finite, was " + noisyUnclippedFraction);
    }
    // exp may overflow to infinity or underflow to 0; the clamp brings both back into range.
    double next = clipNorm * Math.exp(-learningRate * (noisyUnclippedFraction - targetQuantile));
    return Math.min(maxClipNorm, Math.max(minClipNorm, next));
  }

  /**
   * The count's noise multiplier as the joint charge sees it: its std over its sensitivity 1/2,
   * i.e. 2 sigma_b (Andrew et al. 2021, Sec. 3.1).
   */
  public double countNoiseMultiplier() {
    return 2 * countNoiseStd;
  }

  /**
   * The noise multiplier of the sum and the count released together, one Gaussian with (z^-2 + (2
   * sigma_b)^-2)^(-1/2) (Andrew et al. 2021, Sec. 3.1); {@code sumNoiseMultiplier} is z.
   */
  public double jointNoiseMultiplier(double sumNoiseMultiplier) {
    Checks.positiveFinite("sumNoiseMultiplier", sumNoiseMultiplier);
    double count = countNoiseMultiplier();
    return 1 / Math.sqrt(1 / (sumNoiseMultiplier * sumNoiseMultiplier) + 1 / (count * count));
  }

  /**
   * The sum's noise multiplier z_Delta = (z^-2 - (2 sigma_b)^-2)^(-1/2) that makes the joint
   * release charge as one Gaussian of {@code jointNoiseMultiplier} z (inverse of {@link
   * #jointNoiseMultiplier}; Andrew et al. 2021, Sec. 3.1). Needs z < 2 sigma_b.
   */
  public double sumNoiseMultiplierFor(double jointNoiseMultiplier) {
    Checks.positiveFinite("jointNoiseMultiplier", jointNoiseMultiplier);
    double count = countNoiseMultiplier();
    double inverseSquare = 1 / (jointNoiseMultiplier * jointNoiseMultiplier) - 1 / (count * count);
    if (!(inverseSquare > 0)) {
      throw new IllegalArgumentException(
          "jointNoiseMultiplier must be < the count's noise multiplier 2 * countNoiseStd = "
              + count
              + ", was "
              + jointNoiseMultiplier);
    }
    return 1 / Math.sqrt(inverseSquare);
  }
}
