package dev.privagg.audit;

import java.util.Arrays;

/**
 * The updates inserted canaries send, round after round: canary i's direction at {@value
 * CanarySet#NORM_OVER_CLIP} times the C it is given, cut into the spec's tensors, so the job's
 * clipping makes it exactly the direction times C. A direction is the same every round, so it is
 * drawn once and kept while all of them fit in the memory given; past that each update draws its
 * own again (d normals), the same values either way.
 */
public final class CanaryUpdates {
  private final CanarySet canaries;
  private final int[] tensorSizes;
  private final int dims;
  private final double[][] kept;

  /**
   * Updates of {@code canaries} for a model of {@code tensorSizes}; the directions are kept when
   * they take at most {@code maxKeptBytes}.
   */
  public CanaryUpdates(CanarySet canaries, int[] tensorSizes, long maxKeptBytes) {
    this.canaries = canaries;
    this.tensorSizes = tensorSizes.clone();
    this.dims = Arrays.stream(tensorSizes).sum();
    boolean fits = (long) canaries.count() * dims * Double.BYTES <= maxKeptBytes;
    this.kept = fits ? new double[canaries.count()][] : null;
    if (fits) {
      for (int i = 0; i < kept.length; i++) {
        kept[i] = canaries.direction(i, dims);
      }
    }
  }

  /** True when the directions are kept rather than drawn per update. */
  public boolean keepsDirections() {
    return kept != null;
  }

  /** The update inserted canary {@code index} sends when the latest C is {@code clipNorm}. */
  public float[][] update(int index, double clipNorm) {
    if (!(index >= 0 && index < canaries.count())) {
      throw new IllegalArgumentException(
          "only inserted canaries [0, " + canaries.count() + ") are sent, was " + index);
    }
    if (!(clipNorm > 0 && Double.isFinite(clipNorm))) {
      throw new IllegalArgumentException("clipNorm must be > 0 and finite, was " + clipNorm);
    }
    double[] u = kept != null ? kept[index] : canaries.direction(index, dims);
    double scale = CanarySet.NORM_OVER_CLIP * clipNorm;
    float[][] tensors = new float[tensorSizes.length][];
    int at = 0;
    for (int t = 0; t < tensorSizes.length; t++) {
      tensors[t] = new float[tensorSizes[t]];
      for (int i = 0; i < tensorSizes[t]; i++) {
        tensors[t][i] = (float) (scale * u[at++]);
      }
    }
    return tensors;
  }
}
