package dev.privagg.secagg;

/**
 * Masked inputs of {@code bits}-bit words on the wire: word j takes bits {@code [j bits, (j + 1)
 * bits)} of the byte string, least significant bit first (64-bit words are thus the little-endian
 * longs of plaintext-sized secure rounds). The last byte's unused high bits are zero.
 */
public final class WordPacking {
  private WordPacking() {}

  /** Bytes of {@code count} packed words. */
  public static long bytes(long count, int bits) {
    checkBits(bits);
    return (count * bits + 7) / 8;
  }

  /** The low {@code bits} bits of each word, packed. */
  public static byte[] pack(long[] words, int bits) {
    byte[] out = new byte[Math.toIntExact(bytes(words.length, bits))];
    long mask = bits == 64 ? -1L : (1L << bits) - 1;
    long bit = 0;
    for (long word : words) {
      long w = word & mask;
      for (int done = 0; done < bits; ) {
        int at = (int) (bit >>> 3);
        int shift = (int) (bit & 7);
        int take = Math.min(8 - shift, bits - done);
        out[at] |= (byte) (((w >>> done) & ((1L << take) - 1)) << shift);
        done += take;
        bit += take;
      }
    }
    return out;
  }

  /**
   * Adds the {@code target.length} words packed in {@code packed} to {@code target}, modulo 2^64.
   *
   * @throws IllegalArgumentException if {@code packed} is not exactly that many words long, or its
   *     padding bits are not zero
   */
  public static void addTo(long[] target, byte[] packed, int bits) {
    long expected = bytes(target.length, bits);
    if (packed.length != expected) {
      throw new IllegalArgumentException(
          "masked input has " + packed.length + " bytes, expected " + expected);
    }
    int used = (int) (((long) target.length * bits) & 7);
    if (used != 0 && (packed[packed.length - 1] & 0xFF) >>> used != 0) {
      throw new IllegalArgumentException("masked input's padding bits must be zero");
    }
    if (bits <= 56) {
      addNarrowTo(target, packed, bits);
      return;
    }
    long bit = 0;
    for (int j = 0; j < target.length; j++) {
      long w = 0;
      for (int done = 0; done < bits; ) {
        int at = (int) (bit >>> 3);
        int shift = (int) (bit & 7);
        int take = Math.min(8 - shift, bits - done);
        w |= (((packed[at] & 0xFFL) >>> shift) & ((1L << take) - 1)) << done;
        done += take;
        bit += take;
      }
      target[j] += w;
    }
  }

  /**
   * {@link #addTo} for words of at most 56 bits: a word and its offset in its first byte span at
   * most 8 bytes, read at once (one byte at a time only near the end).
   */
  private static void addNarrowTo(long[] target, byte[] packed, int bits) {
    long mask = (1L << bits) - 1;
    long bit = 0;
    int safe = packed.length - 8; // a word starting at or before this byte reads 8 whole bytes
    for (int j = 0; j < target.length; j++, bit += bits) {
      int at = (int) (bit >>> 3);
      int shift = (int) (bit & 7);
      long chunk;
      if (at <= safe) {
        chunk = (long) LITTLE_ENDIAN_LONG.get(packed, at);
      } else {
        chunk = 0;
        for (int k = packed.length - 1; k >= at; k--) {
          chunk = (chunk << 8) | (packed[k] & 0xFFL);
        }
      }
      target[j] += (chunk >>> shift) & mask;
    }
  }

  private static final java.lang.invoke.VarHandle LITTLE_ENDIAN_LONG =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
          long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

  /**
   * Why {@code packed} (read from its position, not consumed) is not {@code count} packed words, or
   * null if it is.
   */
  public static String problem(java.nio.ByteBuffer packed, long count, int bits) {
    long expected = bytes(count, bits);
    if (packed.remaining() != expected) {
      return "masked input has "
          + packed.remaining()
          + " bytes, expected "
          + expected
          + " ("
          + count
          + " words of "
          + bits
          + " bits)";
    }
    int used = (int) ((count * bits) & 7);
    if (used != 0 && (packed.get(packed.limit() - 1) & 0xFF) >>> used != 0) {
      return "masked input's padding bits (after the last word) must be zero";
    }
    return null;
  }

  private static void checkBits(int bits) {
    if (bits < 1 || bits > 64) {
      throw new IllegalArgumentException("bits must be in [1, 64], was " + bits);
    }
  }
}
