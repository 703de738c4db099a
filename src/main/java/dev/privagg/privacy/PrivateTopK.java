package dev.privagg.privacy;

import java.util.Arrays;

/**
 * Pure epsilon-local DP sparsification of a client's update: every coordinate is clipped to
 * [-bound, bound]; {@code selectionShare} of epsilon picks k distinct coordinates with the
 * exponential mechanism on |x_i| (sensitivity {@code bound} when the neighbour is any other
 * update), peeled k times at selectionShare epsilon / k each and drawn in one shot with Gumbel
 * noise (Durfee and Rogers 2019, "Practical differentially private top-k selection with
 * pay-what-you-get composition"); the rest of epsilon releases the k values with Laplace noise for
 * their L1 sensitivity 2 bound k, clipped back into the bound. Every other coordinate becomes 0.
 * The same construction as the Python client's {@code privacy.local_dp.PrivateTopK}.
 */
public record PrivateTopK(int k, double bound, double epsilon, double selectionShare) {
  /**
   * What each Laplace or Gumbel draw cuts off of its exact distribution's tails at most: their
   * tails come from uniforms two stream draws fine, down to 2^-106 (73 scales).
   */
  static final double TAIL_MASS = 0x1p-106;

  /** The most the cut-off tails may add to delta before a release is refused. */
  static final double MAX_SAMPLER_DELTA = 1e-9;

  public PrivateTopK {
    Checks.atLeastOne("privateTopK.k", k);
    Checks.positiveFinite("privateTopK.bound", bound);
    Checks.positiveFinite("privateTopK.epsilon", epsilon);
    if (!(selectionShare > 0 && selectionShare < 1)) {
      throw new IllegalArgumentException(
          "privateTopK.selectionShare must be in (0, 1), was " + selectionShare);
    }
  }

  /** The Laplace scale of each released value: 2 bound k / ((1 - selectionShare) epsilon). */
  public double valueNoiseScale() {
    return 2 * bound * k / ((1 - selectionShare) * epsilon);
  }

  /** The Gumbel scale of each utility: 2 bound / (selectionShare epsilon / k). */
  public double selectionNoiseScale() {
    return 2 * bound * k / (selectionShare * epsilon);
  }

  /**
   * What the cut-off tails add to delta for an update of {@code d} coordinates: within total
   * variation tau of the exact mechanism, an epsilon-DP draw is (epsilon, (1 + e^epsilon) tau)-DP;
   * per draw at its own epsilon (each value at (1 - share) epsilon / k, each of the k peels over d
   * Gumbel draws at share epsilon / k), composed.
   */
  public double samplerDelta(int d) {
    double values = k * (1 + Math.exp((1 - selectionShare) * epsilon / k)) * TAIL_MASS;
    double selection = (double) k * d * (1 + Math.exp(selectionShare * epsilon / k)) * TAIL_MASS;
    return values + selection;
  }

  /** Replaces {@code update} in place by its private top-k release, drawing from {@code noise}. */
  public void applyInPlace(float[][] update, NoiseStream noise) {
    int d = Arrays.stream(update).mapToInt(t -> t.length).sum();
    if (k > d) {
      throw new IllegalArgumentException(
          "privateTopK.k must be in [1, " + d + "] (the update's dimension), was " + k);
    }
    double samplerDelta = samplerDelta(d);
    if (!(samplerDelta <= MAX_SAMPLER_DELTA)) {
      throw new IllegalArgumentException(
          "privateTopK.epsilon must be smaller for the noise sampler: at "
              + epsilon
              + " its cut-off tails would add "
              + samplerDelta
              + " to delta, above "
              + MAX_SAMPLER_DELTA);
    }
    double[] x = new double[d];
    double[] noisyUtility = new double[d];
    int i = 0;
    for (int t = 0; t < update.length; t++) {
      for (int j = 0; j < update[t].length; j++, i++) {
        float v = update[t][j];
        if (!Float.isFinite(v)) {
          throw new NonFiniteUpdateException(t, j, v);
        }
        x[i] = Math.max(-bound, Math.min(bound, v));
        noisyUtility[i] = Math.abs(x[i]) + gumbel(noise, selectionNoiseScale());
      }
    }
    double[] sorted = noisyUtility.clone();
    Arrays.sort(sorted);
    double threshold = sorted[d - k]; // the k-th largest; ties have probability 0
    int released = 0;
    i = 0;
    for (float[] tensor : update) {
      for (int j = 0; j < tensor.length; j++, i++) {
        if (noisyUtility[i] >= threshold && released < k) {
          released++;
          double value = x[i] + laplace(noise, valueNoiseScale());
          tensor[j] = (float) Math.max(-bound, Math.min(bound, value));
        } else {
          tensor[j] = 0;
        }
      }
    }
  }

  /** A uniform in (0, 1) on the stream's 2^-52 grid, never 0 or 1. */
  private static double uniform(NoiseStream noise) {
    return (Math.floor(noise.nextUniform() * 0x1p52) + 0.5) * 0x1p-52;
  }

  /** A uniform in (0, 1] from two stream draws, spaced 2^-106 near 0 (for the tails). */
  private static double fineUniform(NoiseStream noise) {
    double high = Math.floor(noise.nextUniform() * 0x1p53);
    double low = (Math.floor(noise.nextUniform() * 0x1p53) + 0.5) * 0x1p-53;
    return (high + low) * 0x1p-53;
  }

  /**
   * -scale ln(E), E ~ Exp(1) with both tails fine: ln 2 - ln(w) above its median, else -ln(1 - w /
   * 2).
   */
  private static double gumbel(NoiseStream noise, double scale) {
    boolean above = uniform(noise) < 0.5;
    double w = fineUniform(noise);
    double exponential = above ? Math.log(2) - Math.log(w) : -Math.log1p(-w / 2);
    return -scale * Math.log(exponential);
  }

  /** A random sign times -scale ln(w), w a fine uniform. */
  private static double laplace(NoiseStream noise, double scale) {
    double sign = uniform(noise) < 0.5 ? -1 : 1;
    return -scale * sign * Math.log(fineUniform(noise));
  }
}
