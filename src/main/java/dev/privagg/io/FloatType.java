package dev.privagg.io;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The floating-point element types a model file may hold, and how each becomes float32: float32 as
 * it is, float16 and bfloat16 exactly (float32 holds every value of both), float64 rounded to the
 * nearest float32 (values beyond float32's range become infinite and are refused by whoever checks
 * finiteness).
 */
enum FloatType {
  F16(2),
  BF16(2),
  F32(4),
  F64(8);

  final int bytes;

  FloatType(int bytes) {
    this.bytes = bytes;
  }

  /** Reads {@code out.length} values of this type from {@code in} (its position moves on). */
  void read(ByteBuffer in, ByteOrder order, float[] out) {
    ByteBuffer data = in.slice().order(order);
    switch (this) {
      case F32 -> data.asFloatBuffer().get(out);
      case F64 -> {
        for (int i = 0; i < out.length; i++) {
          out[i] = (float) data.getDouble(8 * i);
        }
      }
      case F16 -> {
        for (int i = 0; i < out.length; i++) {
          out[i] = halfToFloat(data.getShort(2 * i));
        }
      }
      case BF16 -> {
        for (int i = 0; i < out.length; i++) {
          out[i] = Float.intBitsToFloat((data.getShort(2 * i) & 0xFFFF) << 16);
        }
      }
    }
    in.position(in.position() + out.length * bytes);
  }

  /**
   * IEEE 754 binary16 to float32, exactly: normal numbers re-biased, subnormals normalised,
   * infinities and NaN (payload kept) carried over.
   */
  static float halfToFloat(short half) {
    int bits = half & 0xFFFF;
    int sign = (bits & 0x8000) << 16;
    int exponent = (bits >>> 10) & 0x1F;
    int mantissa = bits & 0x3FF;
    if (exponent == 0x1F) {
      return Float.intBitsToFloat(sign | 0x7F800000 | (mantissa << 13));
    }
    if (exponent == 0) {
      if (mantissa == 0) {
        return Float.intBitsToFloat(sign);
      }
      // Subnormal: mantissa * 2^-24, which float32 holds exactly.
      float magnitude = mantissa * 0x1p-24f;
      return sign == 0 ? magnitude : -magnitude;
    }
    return Float.intBitsToFloat(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
  }
}
