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
  /** Uniforms strictly inside (0, 1): the inverse CDFs below take logs of u and of 1 - u. */
  private static final double HALF_GRID = 0x1p-54;

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

  /** Replaces {@code update} in place by its private top-k release, drawing from {@code noise}. */
  public void applyInPlace(float[][] update, NoiseStream noise) {
    int d = Arrays.stream(update).mapToInt(t -> t.length).sum();
    if (k > d) {
      throw new IllegalArgumentException(
          "privateTopK.k must be in [1, " + d + "] (the update's dimension), was " + k);
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

  private static double uniform(NoiseStream noise) {
    return noise.nextUniform() + HALF_GRID;
  }

  private static double gumbel(NoiseStream noise, double scale) {
    return -scale * Math.log(-Math.log(uniform(noise)));
  }

  private static double laplace(NoiseStream noise, double scale) {
    double u = uniform(noise) - 0.5;
    return -scale * Math.signum(u) * Math.log1p(-2 * Math.abs(u));
  }
}
