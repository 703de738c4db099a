package dev.privagg.io;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** float32 little-endian, row-major: the {@code Tensor.data} layout. */
public final class Float32 {
  private Float32() {}

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
