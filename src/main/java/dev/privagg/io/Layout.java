package dev.privagg.io;

/** Reorders tensor values between memory layouts. */
final class Layout {
  private Layout() {}

  /**
   * The row-major (C order) copy of {@code values} stored in column-major (Fortran) order for
   * {@code shape}: in Fortran order the first index varies fastest, so element (i0, ..., ik) sits
   * at i0 + d0 * (i1 + d1 * (i2 + ...)).
   */
  static float[] fortranToRowMajor(int[] shape, float[] values) {
    if (shape.length < 2) {
      return values;
    }
    int rank = shape.length;
    long[] stride = new long[rank]; // Fortran strides
    long s = 1;
    for (int k = 0; k < rank; k++) {
      stride[k] = s;
      s *= shape[k];
    }
    float[] out = new float[values.length];
    int[] index = new int[rank];
    long source = 0;
    for (int i = 0; i < out.length; i++) {
      out[i] = values[(int) source];
      // Next index in row-major order: the last dimension varies fastest.
      for (int k = rank - 1; k >= 0; k--) {
        index[k]++;
        source += stride[k];
        if (index[k] < shape[k]) {
          break;
        }
        source -= stride[k] * shape[k];
        index[k] = 0;
      }
    }
    return out;
  }
}
