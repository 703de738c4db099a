package dev.privagg.privacy;

import java.util.Arrays;

/**
 * Running sum of clipped client updates in exact fixed-point arithmetic.
 *
 * <p>Each clipped value v (|v| <= C, since the clipped update has L2 norm <= C) is stored as the
 * integer trunc(v * 2^36 / C). Truncation toward zero never increases a magnitude, so the quantised
 * update still has L2 norm <= C and the sensitivity of the sum stays C. Integer addition is
 * associative and commutative, so the sum is bit-identical whatever order updates arrive in: a
 * round recomputed after a failure gives the same sum (docs/design.md, Releases under failure). Up
 * to 2^27 (134,217,728) contributions fit in a long without overflow, enough for cross-device
 * cohorts of 10^8; the quantum C * 2^-36 (1.5e-11 C) is far below the noise std z * C of any
 * private round.
 *
 * <p>Memory is one long per model coordinate, independent of how many updates were added.
 */
public final class ClippedSum {
  /** Fixed-point scale: one unit is {@code clipNorm * 2^-FRACTION_BITS}. */
  public static final int FRACTION_BITS = 36;

  /** |sum| <= count * 2^36 * (1 - 2^-20) < 2^63 as long as count <= 2^27. */
  public static final long MAX_CONTRIBUTIONS = 1L << 27;

  /**
   * Smallest clip norm the fixed-point scale takes. Below about 4e-298 the scale 2^36 / C overflows
   * to infinity: every clipped value becomes Long.MAX_VALUE units, one update then weighs far more
   * than C, and a second one wraps the sum. 1e-100 keeps far from that edge and from subnormal
   * units (C * 2^-36).
   */
  public static final double MIN_CLIP_NORM = 1e-100;

  /**
   * Largest clip norm: a full round's sum, up to 2^27 C, and the noise on it (std z C) stay finite
   * doubles with a wide margin (above about 1e300 a full sum overflows when decoded).
   */
  public static final double MAX_CLIP_NORM = 1e100;

  private final ClippingPolicy policy;
  private final int[] tensorSizes;
  private final int[] offsets;
  private final long[] units;
  private final double unitsPerValue;
  private long contributions;

  /** An empty sum for updates with the given tensor sizes, clipped by {@code policy}. */
  public ClippedSum(ClippingPolicy policy, int[] tensorSizes) {
    this(policy, tensorSizes, null);
  }

  private ClippedSum(ClippingPolicy policy, int[] tensorSizes, long[] units) {
    if (policy == null) {
      throw new IllegalArgumentException("policy must be set, was null");
    }
    if (!(policy.clipNorm() >= MIN_CLIP_NORM && policy.clipNorm() <= MAX_CLIP_NORM)) {
      throw new IllegalArgumentException(
          "clipNorm must be in ["
              + MIN_CLIP_NORM
              + ", "
              + MAX_CLIP_NORM
              + "] for the fixed-point sum, was "
              + policy.clipNorm());
    }
    this.policy = policy;
    this.tensorSizes = tensorSizes.clone();
    this.offsets = new int[tensorSizes.length];
    long dimension = 0;
    for (int t = 0; t < tensorSizes.length; t++) {
      if (tensorSizes[t] < 1) {
        throw new IllegalArgumentException(
            "tensor sizes must be >= 1, was " + tensorSizes[t] + " for tensor " + t);
      }
      offsets[t] = (int) dimension;
      dimension += tensorSizes[t];
    }
    if (dimension > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("model dimension must fit an array, was " + dimension);
    }
    if (units != null && units.length != dimension) {
      throw new IllegalArgumentException(
          "sum has " + units.length + " coordinates, expected " + dimension);
    }
    this.units = units != null ? units : new long[(int) dimension];
    this.unitsPerValue = Math.scalb(1.0, FRACTION_BITS) / policy.clipNorm();
  }

  /**
   * Clips {@code tensors} and adds them to the sum.
   *
   * @return what clipping did (pre-clip norm, whether it clipped)
   * @throws NonFiniteUpdateException if the update holds NaN or infinity; the sum is unchanged
   * @throws IllegalArgumentException if the tensor sizes differ from this sum's
   */
  public ClipResult add(float[][] tensors) {
    checkShape(tensors);
    if (contributions >= MAX_CONTRIBUTIONS) {
      throw new IllegalStateException(
          "a round holds at most " + MAX_CONTRIBUTIONS + " contributions");
    }
    ClipResult result = policy.clip(tensors);
    for (int t = 0; t < tensors.length; t++) {
      accumulate(tensors[t], result.scale(t) * unitsPerValue, offsets[t]);
    }
    contributions++;
    return result;
  }

  private void accumulate(float[] values, double factor, int offset) {
    long[] target = units;
    for (int i = 0; i < values.length; i++) {
      target[offset + i] += (long) (values[i] * factor); // cast truncates toward zero
    }
  }

  /** Adds another sum of the same shape and policy (for parallel partial sums). */
  public void addAll(ClippedSum other) {
    if (!Arrays.equals(tensorSizes, other.tensorSizes)
        || other.policy.clipNorm() != policy.clipNorm()) {
      throw new IllegalArgumentException("sums of different shape or clipNorm cannot be merged");
    }
    if (contributions + other.contributions > MAX_CONTRIBUTIONS) {
      throw new IllegalStateException(
          "a round holds at most " + MAX_CONTRIBUTIONS + " contributions");
    }
    for (int i = 0; i < units.length; i++) {
      units[i] += other.units[i];
    }
    contributions += other.contributions;
  }

  /** True when the sum holds {@link #MAX_CONTRIBUTIONS} and takes no further update. */
  public boolean isFull() {
    return contributions >= MAX_CONTRIBUTIONS;
  }

  /**
   * Re-expresses units kept at another fixed-point scale (state written by an older version) at
   * {@link #FRACTION_BITS}. Going to fewer bits divides with truncation toward zero, which never
   * grows a magnitude: the sum moves by less than one unit (C * 2^-36), far below the noise.
   */
  public static long[] rescaled(long[] units, int fromFractionBits) {
    if (fromFractionBits < FRACTION_BITS || fromFractionBits > 62) {
      throw new IllegalArgumentException(
          "fromFractionBits must be in ["
              + FRACTION_BITS
              + ", 62] (state from this or an older version), was "
              + fromFractionBits);
    }
    long divisor = 1L << (fromFractionBits - FRACTION_BITS);
    long[] out = new long[units.length];
    for (int i = 0; i < units.length; i++) {
      out[i] = units[i] / divisor;
    }
    return out;
  }

  /** Number of updates added. Sensitive: never publish it with a model. */
  public long contributions() {
    return contributions;
  }

  /** Total number of coordinates. */
  public int dimension() {
    return units.length;
  }

  /** The sum as doubles, one per coordinate, in tensor order. */
  public double[] toDoubles() {
    double valuePerUnit = policy.clipNorm() * Math.scalb(1.0, -FRACTION_BITS);
    double[] out = new double[units.length];
    for (int i = 0; i < units.length; i++) {
      out[i] = units[i] * valuePerUnit;
    }
    return out;
  }

  /** The raw fixed-point units (a copy), for checkpointing. */
  public long[] units() {
    return units.clone();
  }

  /**
   * A sum that works directly on {@code units} (no copy), for state that holds the array: adds
   * change the caller's array in place.
   */
  public static ClippedSum wrap(
      ClippingPolicy policy, int[] tensorSizes, long[] units, long contributions) {
    ClippedSum sum = new ClippedSum(policy, tensorSizes, units);
    sum.contributions = contributions;
    return sum;
  }

  /** Restores a sum from checkpointed units and contribution count. */
  public static ClippedSum restore(
      ClippingPolicy policy, int[] tensorSizes, long[] units, long contributions) {
    ClippedSum sum = new ClippedSum(policy, tensorSizes);
    if (units.length != sum.units.length) {
      throw new IllegalArgumentException(
          "checkpointed sum has " + units.length + " coordinates, expected " + sum.units.length);
    }
    System.arraycopy(units, 0, sum.units, 0, units.length);
    sum.contributions = contributions;
    return sum;
  }

  private void checkShape(float[][] tensors) {
    if (tensors.length != tensorSizes.length) {
      throw new IllegalArgumentException(
          "update has " + tensors.length + " tensors, expected " + tensorSizes.length);
    }
    for (int t = 0; t < tensors.length; t++) {
      if (tensors[t].length != tensorSizes[t]) {
        throw new IllegalArgumentException(
            "tensor " + t + " has " + tensors[t].length + " values, expected " + tensorSizes[t]);
      }
    }
  }
}
