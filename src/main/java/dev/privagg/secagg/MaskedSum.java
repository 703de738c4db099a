package dev.privagg.secagg;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;

/** Adds masked inputs (64-bit little-endian words) into a sum, modulo 2^64. */
public final class MaskedSum {
  private MaskedSum() {}

  /** Adds the {@code units.length} words of {@code words} to {@code units}, wrapping. */
  public static void add(long[] units, byte[] words) {
    if (words.length != 8L * units.length) {
      throw new IllegalArgumentException(
          "masked input has " + words.length + " bytes, expected " + 8L * units.length);
    }
    LongBuffer in = ByteBuffer.wrap(words).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
    for (int i = 0; i < units.length; i++) {
      units[i] += in.get(i);
    }
  }
}
