package dev.privagg.io;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** float32 little-endian, row-major: the {@code Tensor.data} layout. */
public final class Float32 {
  private static final VarHandle INT_LE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final int EXPONENT_BITS = 0x7f800000;
  // Two floats per long: their exponent masks, and the carry that sets a lane's top bit exactly
  // when its exponent is all ones (lane values stay <= 0x80000000, so lanes never carry over).
  private static final long EXPONENTS_2 = 0x7f8000007f800000L;
  private static final long CARRY_2 = 0x0080000000800000L;
  private static final long TOP_BITS_2 = 0x8000000080000000L;
  private static final int BLOCK_BYTES = 4096;

  private Float32() {}

  /**
   * Index of the first NaN or infinity among the float32 values in {@code data}, or -1 if all are
   * finite. A float is non-finite exactly when its exponent bits are all set; blocks are checked
   * eight bytes at a time without a branch per value, and only a flagged block is searched.
   */
  public static int firstNonFinite(byte[] data) {
    int usable = data.length & ~7;
    for (int block = 0; block < usable; block += BLOCK_BYTES) {
      int end = Math.min(usable, block + BLOCK_BYTES);
      long flags = 0;
      for (int i = block; i < end; i += 8) {
        flags |= (((long) LONG_LE.get(data, i) & EXPONENTS_2) + CARRY_2);
      }
      if ((flags & TOP_BITS_2) != 0) {
        return firstNonFinite(data, block, end);
      }
    }
    return firstNonFinite(data, usable, data.length);
  }

  private static int firstNonFinite(byte[] data, int from, int to) {
    for (int i = from; i + 3 < to; i += 4) {
      if (((int) INT_LE.get(data, i) & EXPONENT_BITS) == EXPONENT_BITS) {
        return i / 4;
      }
    }
    return -1;
  }

  /**
   * The sum of squares of the float32 values in {@code data}, in double, in the same four-lane
   * order as {@code ClippingPolicy} sums a float array: the same values give the same bits.
   */
  public static double sumOfSquares(byte[] data) {
    int n = data.length / 4;
    double s0 = 0;
    double s1 = 0;
    double s2 = 0;
    double s3 = 0;
    int i = 0;
    for (; i + 3 < n; i += 4) {
      double v0 = get(data, i);
      double v1 = get(data, i + 1);
      double v2 = get(data, i + 2);
      double v3 = get(data, i + 3);
      s0 += v0 * v0;
      s1 += v1 * v1;
      s2 += v2 * v2;
      s3 += v3 * v3;
    }
    for (; i < n; i++) {
      double v = get(data, i);
      s0 += v * v;
    }
    return (s0 + s1) + (s2 + s3);
  }

  /** The value at {@code index} of float32 little-endian {@code data}. */
  public static float get(byte[] data, int index) {
    return Float.intBitsToFloat((int) INT_LE.get(data, 4 * index));
  }

  /** The buffer's remaining bytes: its backing array when that is exactly them, else a copy. */
  public static byte[] bytes(ByteBuffer data) {
    if (data.hasArray()
        && data.arrayOffset() == 0
        && data.position() == 0
        && data.remaining() == data.array().length) {
      return data.array();
    }
    byte[] out = new byte[data.remaining()];
    data.duplicate().get(out);
    return out;
  }

  /** Reads {@code count} floats from {@code data} into {@code out} at {@code offset}. */
  public static void read(ByteBuffer data, float[] out, int offset, int count) {
    data.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(out, offset, count);
  }

  /** The values as a little-endian byte buffer. */
  public static ByteBuffer write(float[] values, int offset, int count) {
    ByteBuffer buffer = ByteBuffer.allocate(4 * count).order(ByteOrder.LITTLE_ENDIAN);
    buffer.asFloatBuffer().put(values, offset, count);
    return buffer;
  }
}
