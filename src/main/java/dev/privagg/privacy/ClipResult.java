package dev.privagg.privacy;

/**
 * What clipping did to one update.
 *
 * @param preClipNorm L2 norm of the whole update before clipping (all tensors together)
 * @param clipped true when any tensor was scaled down
 * @param scales per-tensor factor in (0, 1] applied to the update's values
 */
public record ClipResult(double preClipNorm, boolean clipped, double[] scales) {
  /** Copies the scales so the result stays immutable. */
  public ClipResult {
    scales = scales.clone();
  }

  /** The factor applied to tensor {@code tensor}. */
  public double scale(int tensor) {
    return scales[tensor];
  }
}
