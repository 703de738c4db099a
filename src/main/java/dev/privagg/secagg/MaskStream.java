package dev.privagg.secagg;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The mask of a mask key: coordinate j is the little-endian 64-bit word at bytes {@code [8j, 8j +
 * 8)} of the AES-256-CTR keystream under the key, from the all-zero counter block (the whole
 * 16-byte block is the big-endian counter, as {@code AES/CTR/NoPadding} increments it). Coordinate
 * j lies in block {@code j / 2}, so any range of coordinates is expanded without those before it: a
 * shard of the model adds its own part.
 */
public final class MaskStream {
  /** Keystream generated per cipher call: large calls keep the AES intrinsics busy. */
  private static final int CHUNK_BYTES = 64 * 1024;

  /** Encrypting zeros yields the keystream; the cipher only reads this array. */
  private static final byte[] ZEROS = new byte[CHUNK_BYTES];

  private static final VarHandle LITTLE_ENDIAN_LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private final SecretKeySpec key;

  /** The mask of a 32-byte mask key. */
  public MaskStream(byte[] key) {
    this.key = new SecretKeySpec(Bytes.requireLength("key", key, 32), "AES");
  }

  /**
   * Adds {@code sign * mask(j)} to {@code target[j - from]} for every coordinate j in {@code [from,
   * to)}, modulo 2^64.
   *
   * @param sign +1 or -1
   */
  public void addTo(long[] target, int from, int to, int sign) {
    if (!(0 <= from && from <= to && to - from <= target.length)) {
      throw new IllegalArgumentException(
          "coordinates [from, to) must satisfy 0 <= from <= to and fit the target of length "
              + target.length
              + ", were ["
              + from
              + ", "
              + to
              + ")");
    }
    if (sign != 1 && sign != -1) {
      throw new IllegalArgumentException("sign must be +1 or -1, was " + sign);
    }
    if (from == to) {
      return;
    }
    Cipher cipher = cipherAtBlock(from / 2);
    byte[] keystream = new byte[CHUNK_BYTES];
    // Start at the block boundary: an odd first coordinate skips the block's first word.
    int j = from & ~1;
    while (j < to) {
      int words = Math.min(CHUNK_BYTES / 8, to - j);
      int bytes = (8 * words + 15) & ~15;
      update(cipher, bytes, keystream);
      int first = Math.max(j, from);
      for (int c = first; c < j + words; c++) {
        long word = (long) LITTLE_ENDIAN_LONG.get(keystream, 8 * (c - j));
        target[c - from] += sign * word;
      }
      j += words;
    }
  }

  private Cipher cipherAtBlock(long block) {
    byte[] counter = new byte[16];
    for (int i = 0; i < 8; i++) {
      counter[15 - i] = (byte) (block >>> (8 * i));
    }
    try {
      Cipher cipher = Cipher.getInstance("AES/CTR/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(counter));
      return cipher;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES/CTR/NoPadding with a 256-bit key is unavailable", e);
    }
  }

  private static void update(Cipher cipher, int bytes, byte[] keystream) {
    try {
      cipher.update(ZEROS, 0, bytes, keystream, 0);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-CTR keystream failed", e);
    }
  }
}
