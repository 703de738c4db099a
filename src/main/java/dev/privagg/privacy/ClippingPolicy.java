package dev.privagg.privacy;

import java.util.Arrays;

/**
 * L2 clipping of a client update made of several tensors, so that the whole update's L2 norm is at
 * most {@code clipNorm} (design.md invariant 1; McMahan et al. 2018, DP-FedAvg).
 *
 * <ul>
 *   <li>{@link #flat}: one factor min(1, C / ||u||) for all tensors together.
 *   <li>{@link #perLayer}: tensor l is clipped to its own bound C_l with sum C_l^2 = C^2, so the
 *       whole update still has norm <= C (McMahan et al. 2018, Sec. 3, per-layer clipping). The
 *       split is equal (C_l = C / sqrt(L)) or proportional to sqrt(tensor size).
 * </ul>
 *
 * <p>Floating point: the norm is computed in double, whose rounding could leave a clipped update a
 * relative 1e-9 above its bound. Clipping therefore scales to {@code bound * (1 - 2^-20)}, so the
 * true norm stays <= the bound for any model below 2^30 parameters; unclipped updates are
 * untouched. A NaN or infinite value raises {@link NonFiniteUpdateException}.
 */
public final class ClippingPolicy {
  /** How the bound is spread over tensors. */
  public enum Mode {
    FLAT,
    PER_LAYER
  }

  /** How per-layer bounds are split. */
  public enum LayerSplit {
    /** C_l = C / sqrt(L). */
    EQUAL,
    /** C_l proportional to sqrt(size_l), so each coordinate gets the same share. */
    SQRT_SIZE
  }

  private static final double SAFETY = 1.0 - 0x1p-20;

  private final Mode mode;
  private final double clipNorm;
  private final double[] layerBounds;

  private ClippingPolicy(Mode mode, double clipNorm, double[] layerBounds) {
    this.mode = mode;
    this.clipNorm = clipNorm;
    this.layerBounds = layerBounds;
  }

  /** Flat clipping of the whole update to {@code clipNorm}. */
  public static ClippingPolicy flat(double clipNorm) {
    Checks.positiveFinite("clipNorm", clipNorm);
    return new ClippingPolicy(Mode.FLAT, clipNorm, new double[0]);
  }

  /** Per-layer clipping over tensors of the given sizes, bounds split as {@code split} says. */
  public static ClippingPolicy perLayer(double clipNorm, int[] tensorSizes, LayerSplit split) {
    Checks.positiveFinite("clipNorm", clipNorm);
    if (tensorSizes == null || tensorSizes.length == 0) {
      throw new IllegalArgumentException("per-layer clipping needs at least one tensor size");
    }
    double[] weights = new double[tensorSizes.length];
    for (int l = 0; l < tensorSizes.length; l++) {
      if (tensorSizes[l] < 1) {
        throw new IllegalArgumentException(
            "tensor sizes must be >= 1, was " + tensorSizes[l] + " for tensor " + l);
      }
      weights[l] = split == LayerSplit.EQUAL ? 1.0 : tensorSizes[l];
    }
    double total = Arrays.stream(weights).sum();
    double[] bounds = new double[weights.length];
    for (int l = 0; l < weights.length; l++) {
      bounds[l] = clipNorm * Math.sqrt(weights[l] / total); // sum of squares = clipNorm^2
    }
    return new ClippingPolicy(Mode.PER_LAYER, clipNorm, bounds);
  }

  /**
   * Per-layer clipping with tensor l's bound C sqrt(share_l / sum of shares), so the squared bounds
   * add up to C^2 as the shares say (a statistics job's budget split).
   */
  public static ClippingPolicy perLayer(double clipNorm, double[] shares) {
    Checks.positiveFinite("clipNorm", clipNorm);
    if (shares == null || shares.length == 0) {
      throw new IllegalArgumentException("per-layer clipping needs at least one share");
    }
    double total = 0;
    for (int l = 0; l < shares.length; l++) {
      Checks.positiveFinite("share of tensor " + l, shares[l]);
      total += shares[l];
    }
    double[] bounds = new double[shares.length];
    for (int l = 0; l < shares.length; l++) {
      bounds[l] = clipNorm * Math.sqrt(shares[l] / total);
    }
    return new ClippingPolicy(Mode.PER_LAYER, clipNorm, bounds);
  }

  /** The overall L2 bound C. */
  public double clipNorm() {
    return clipNorm;
  }

  /** Flat or per-layer. */
  public Mode mode() {
    return mode;
  }

  /** The per-layer bounds C_l (empty for flat clipping). */
  public double[] layerBounds() {
    return layerBounds.clone();
  }

  /**
   * Measures the update and decides each tensor's scale factor; the update is not changed.
   *
   * @throws NonFiniteUpdateException if any value is NaN or infinite
   * @throws IllegalArgumentException if per-layer clipping was set up for another tensor count
   */
  public ClipResult clip(float[][] tensors) {
    double[] squares = new double[tensors.length];
    double total = 0;
    for (int t = 0; t < tensors.length; t++) {
      squares[t] = sumOfSquares(t, tensors[t]);
      total += squares[t];
    }
    double norm = Math.sqrt(total);
    double[] scales = new double[tensors.length];
    boolean clipped = false;
    if (mode == Mode.FLAT) {
      double scale = scaleFor(norm, clipNorm);
      Arrays.fill(scales, scale);
      clipped = scale < 1;
    } else {
      if (tensors.length != layerBounds.length) {
        throw new IllegalArgumentException(
            "per-layer clipping was set up for "
                + layerBounds.length
                + " tensors, the update has "
                + tensors.length);
      }
      for (int t = 0; t < tensors.length; t++) {
        scales[t] = scaleFor(Math.sqrt(squares[t]), layerBounds[t]);
        clipped |= scales[t] < 1;
      }
    }
    return new ClipResult(norm, clipped, scales);
  }

  /** Clips {@code tensors} in place and returns what was done. */
  public ClipResult clipInPlace(float[][] tensors) {
    ClipResult result = clip(tensors);
    for (int t = 0; t < tensors.length; t++) {
      double scale = result.scale(t);
      if (scale < 1) {
        float[] values = tensors[t];
        for (int i = 0; i < values.length; i++) {
          values[i] = (float) (values[i] * scale);
        }
      }
    }
    return result;
  }

  private static double scaleFor(double norm, double bound) {
    return norm <= bound * SAFETY ? 1.0 : bound * SAFETY / norm;
  }

  private static double sumOfSquares(int tensorIndex, float[] values) {
    // Four independent partial sums let the CPU overlap additions; the order stays fixed, so the
    // result is the same on every run.
    double s0 = 0;
    double s1 = 0;
    double s2 = 0;
    double s3 = 0;
    int i = 0;
    for (; i + 3 < values.length; i += 4) {
      s0 += (double) values[i] * values[i];
      s1 += (double) values[i + 1] * values[i + 1];
      s2 += (double) values[i + 2] * values[i + 2];
      s3 += (double) values[i + 3] * values[i + 3];
    }
    for (; i < values.length; i++) {
      s0 += (double) values[i] * values[i];
    }
    double sum = (s0 + s1) + (s2 + s3);
    // Squares of finite floats are finite in double, so a non-finite sum means a NaN or infinity.
    if (!Double.isFinite(sum)) {
      for (int j = 0; j < values.length; j++) {
        if (!Float.isFinite(values[j])) {
          throw new NonFiniteUpdateException(tensorIndex, j, values[j]);
        }
      }
    }
    return sum;
  }

  @Override
  public String toString() {
    return mode == Mode.FLAT
        ? "flat(clipNorm=" + clipNorm + ")"
        : "perLayer(clipNorm=" + clipNorm + ", bounds=" + Arrays.toString(layerBounds) + ")";
  }
}
