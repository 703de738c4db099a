package dev.privagg.secagg;

import java.nio.charset.StandardCharsets;

/** The wire encodings of the protocol's notation: {@code u32}, {@code u64}, {@code lp}. */
final class Bytes {
  private Bytes() {}

  /** A fresh SHA-256 digest. */
  static java.security.MessageDigest sha256() {
    try {
      return java.security.MessageDigest.getInstance("SHA-256");
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  /** {@code u32(x)}: 4 bytes, big-endian; x is an index, so never negative. */
  static byte[] u32(int x) {
    if (x < 0) {
      throw new IllegalArgumentException("u32 value must be >= 0, was " + x);
    }
    return new byte[] {(byte) (x >>> 24), (byte) (x >>> 16), (byte) (x >>> 8), (byte) x};
  }

  /** {@code u64(x)}: 8 bytes, big-endian. */
  static byte[] u64(long x) {
    byte[] out = new byte[8];
    for (int i = 0; i < 8; i++) {
      out[i] = (byte) (x >>> (56 - 8 * i));
    }
    return out;
  }

  /** {@code lp(b)}: {@code u32(len(b)) || b}. */
  static byte[] lp(byte[] b) {
    return concat(u32(b.length), b);
  }

  /** {@code lp} of a string's UTF-8 bytes. */
  static byte[] lp(String s) {
    return lp(s.getBytes(StandardCharsets.UTF_8));
  }

  static byte[] concat(byte[]... parts) {
    int length = 0;
    for (byte[] part : parts) {
      length += part.length;
    }
    byte[] out = new byte[length];
    int at = 0;
    for (byte[] part : parts) {
      System.arraycopy(part, 0, out, at, part.length);
      at += part.length;
    }
    return out;
  }

  /** Requires {@code bytes.length == expected}; {@code name} is the parameter's name. */
  static byte[] requireLength(String name, byte[] bytes, int expected) {
    if (bytes == null || bytes.length != expected) {
      throw new IllegalArgumentException(
          name
              + " must be "
              + expected
              + " bytes, was "
              + (bytes == null ? "null" : bytes.length + " bytes"));
    }
    return bytes;
  }
}
