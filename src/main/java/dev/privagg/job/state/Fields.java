package dev.privagg.job.state;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The field encodings every layout is written in: big-endian primitives, and for arrays, strings
 * and boxed values a length or presence first, -1 (or false) for null.
 */
final class Fields {
  private static final int NULL = -1;

  private Fields() {}

  static void writeString(String s, DataOutputView out) throws IOException {
    writeBytes(s == null ? null : s.getBytes(StandardCharsets.UTF_8), out);
  }

  static String readString(DataInputView in) throws IOException {
    byte[] bytes = readBytes(in);
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  static void writeBytes(byte[] bytes, DataOutputView out) throws IOException {
    if (bytes == null) {
      out.writeInt(NULL);
      return;
    }
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  static byte[] readBytes(DataInputView in) throws IOException {
    int n = length(in);
    if (n == NULL) {
      return null;
    }
    byte[] bytes = new byte[n];
    in.readFully(bytes);
    return bytes;
  }

  static void writeByteArrays(byte[][] arrays, DataOutputView out) throws IOException {
    if (arrays == null) {
      out.writeInt(NULL);
      return;
    }
    out.writeInt(arrays.length);
    for (byte[] a : arrays) {
      writeBytes(a, out);
    }
  }

  static byte[][] readByteArrays(DataInputView in) throws IOException {
    int n = length(in);
    if (n == NULL) {
      return null;
    }
    byte[][] arrays = new byte[n][];
    for (int i = 0; i < n; i++) {
      arrays[i] = readBytes(in);
    }
    return arrays;
  }

  static void writeStrings(String[] strings, DataOutputView out) throws IOException {
    if (strings == null) {
      out.writeInt(NULL);
      return;
    }
    out.writeInt(strings.length);
    for (String s : strings) {
      writeString(s, out);
    }
  }

  static String[] readStrings(DataInputView in) throws IOException {
    int n = length(in);
    if (n == NULL) {
      return null;
    }
    String[] strings = new String[n];
    for (int i = 0; i < n; i++) {
      strings[i] = readString(in);
    }
    return strings;
  }

  static void writeLongs(long[] values, DataOutputView out) throws IOException {
    if (values == null) {
      out.writeInt(NULL);
      return;
    }
    out.writeInt(values.length);
    for (long v : values) {
      out.writeLong(v);
    }
  }

  static long[] readLongs(DataInputView in) throws IOException {
    int n = length(in);
    if (n == NULL) {
      return null;
    }
    long[] values = new long[n];
    for (int i = 0; i < n; i++) {
      values[i] = in.readLong();
    }
    return values;
  }

  static void writeFloats(float[] values, DataOutputView out) throws IOException {
    if (values == null) {
      out.writeInt(NULL);
      return;
    }
    out.writeInt(values.length);
    for (float v : values) {
      out.writeFloat(v);
    }
  }

  static float[] readFloats(DataInputView in) throws IOException {
    int n = length(in);
    if (n == NULL) {
      return null;
    }
    float[] values = new float[n];
    for (int i = 0; i < n; i++) {
      values[i] = in.readFloat();
    }
    return values;
  }

  /** Doubles in chunks of bytes: a model-sized buffer is written at copy speed. */
  static void writeDoubles(double[] values, DataOutputView out) throws IOException {
    out.writeInt(values.length);
    java.nio.ByteBuffer chunk = java.nio.ByteBuffer.allocate(CHUNK_DOUBLES * Double.BYTES);
    for (int from = 0; from < values.length; from += CHUNK_DOUBLES) {
      int count = Math.min(CHUNK_DOUBLES, values.length - from);
      chunk.clear();
      chunk.asDoubleBuffer().put(values, from, count);
      out.write(chunk.array(), 0, count * Double.BYTES);
    }
  }

  static double[] readDoubles(DataInputView in) throws IOException {
    int n = length(in);
    if (n == NULL) {
      throw new IOException("corrupt state: a noise buffer without length");
    }
    double[] values = new double[n];
    byte[] bytes = new byte[CHUNK_DOUBLES * Double.BYTES];
    for (int from = 0; from < n; from += CHUNK_DOUBLES) {
      int count = Math.min(CHUNK_DOUBLES, n - from);
      in.readFully(bytes, 0, count * Double.BYTES);
      java.nio.ByteBuffer.wrap(bytes, 0, count * Double.BYTES)
          .asDoubleBuffer()
          .get(values, from, count);
    }
    return values;
  }

  private static final int CHUNK_DOUBLES = 8192;

  static void writeNullableDouble(Double value, DataOutputView out) throws IOException {
    out.writeBoolean(value != null);
    if (value != null) {
      out.writeDouble(value);
    }
  }

  static Double readNullableDouble(DataInputView in) throws IOException {
    return in.readBoolean() ? in.readDouble() : null;
  }

  static <E extends Enum<E>> void writeEnum(E value, DataOutputView out) throws IOException {
    writeString(value == null ? null : value.name(), out);
  }

  static <E extends Enum<E>> E readEnum(Class<E> type, DataInputView in) throws IOException {
    String name = readString(in);
    if (name == null) {
      return null;
    }
    try {
      return Enum.valueOf(type, name);
    } catch (IllegalArgumentException e) {
      throw new IOException("unknown " + type.getSimpleName() + " '" + name + "' in state", e);
    }
  }

  private static int length(DataInputView in) throws IOException {
    int n = in.readInt();
    if (n < NULL) {
      throw new IOException("corrupt state: negative length " + n);
    }
    return n;
  }
}
