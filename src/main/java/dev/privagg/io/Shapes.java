package dev.privagg.io;

/** Element counts of tensor shapes, without overflow. */
final class Shapes {
  /** Returned when a shape has more elements than any float array can hold. */
  static final long TOO_MANY = -1;

  private Shapes() {}

  /**
   * The product of {@code dims}, or {@link #TOO_MANY} once it passes {@code Integer.MAX_VALUE - 8}
   * (the largest Java array): checked per factor, so a crafted shape cannot wrap to a small count.
   * Every dimension must be >= 0.
   */
  static long elements(long[] dims) {
    long size = 1;
    for (long dim : dims) {
      if (dim < 0) {
        throw new IllegalArgumentException("dimension " + dim + " is negative");
      }
      if (dim > Integer.MAX_VALUE - 8) {
        // Even beside a zero dimension: the shape itself must fit int dimensions.
        return TOO_MANY;
      }
      if (dim != 0 && size > (Integer.MAX_VALUE - 8) / dim) {
        // Still zero if a later dimension is 0, but such a file is refused anyway.
        return TOO_MANY;
      }
      size *= dim;
    }
    return size;
  }

  static long elements(int[] dims) {
    long[] wide = new long[dims.length];
    for (int i = 0; i < dims.length; i++) {
      wide[i] = dims[i];
    }
    return elements(wide);
  }

  /** The shape as ints; every dimension must already be known to fit. */
  static int[] narrow(long[] dims) {
    int[] out = new int[dims.length];
    for (int i = 0; i < dims.length; i++) {
      out[i] = Math.toIntExact(dims[i]);
    }
    return out;
  }
}
