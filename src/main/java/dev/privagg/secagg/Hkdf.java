package dev.privagg.secagg;

import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HKDF with HMAC-SHA256 (RFC 5869). The protocol always uses an empty salt and 32 bytes of output
 * ({@link #derive}); extract and expand are exposed for the RFC's test vectors.
 */
public final class Hkdf {
  /** SHA-256's output length, HashLen in RFC 5869. */
  public static final int HASH_BYTES = 32;

  private static final String HMAC = "HmacSHA256";

  private Hkdf() {}

  /** {@code HKDF(ikm, info)} of the protocol: empty salt, 32 bytes. */
  public static byte[] derive(byte[] ikm, byte[] info) {
    return expand(extract(new byte[0], ikm), info, HASH_BYTES);
  }

  /**
   * RFC 5869 Section 2.2: {@code PRK = HMAC(salt, ikm)}. An empty salt stands for HashLen zero
   * bytes, which HMAC pads to the same key.
   */
  public static byte[] extract(byte[] salt, byte[] ikm) {
    Mac mac = hmac(salt.length == 0 ? new byte[HASH_BYTES] : salt);
    return mac.doFinal(ikm);
  }

  /** RFC 5869 Section 2.3: {@code T(i) = HMAC(prk, T(i-1) || info || i)}, concatenated. */
  public static byte[] expand(byte[] prk, byte[] info, int length) {
    if (!(length >= 1 && length <= 255 * HASH_BYTES)) {
      throw new IllegalArgumentException(
          "HKDF length must be in [1, " + 255 * HASH_BYTES + "], was " + length);
    }
    Mac mac = hmac(prk);
    byte[] out = new byte[length];
    byte[] previous = new byte[0];
    for (int i = 1, at = 0; at < length; i++) {
      mac.update(previous);
      mac.update(info);
      mac.update((byte) i);
      previous = mac.doFinal();
      int n = Math.min(HASH_BYTES, length - at);
      System.arraycopy(previous, 0, out, at, n);
      at += n;
    }
    return out;
  }

  private static Mac hmac(byte[] key) {
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(new SecretKeySpec(key, HMAC));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is required of every Java platform", e);
    }
  }
}
