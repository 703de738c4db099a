package dev.privagg.secagg;

import java.security.GeneralSecurityException;
import java.util.random.RandomGenerator;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * AES-256-GCM of the pair of shares a client sends one neighbour in phase 2: plaintext {@code share
 * of s_sk || share of b} (64 bytes), associated data {@code ctx || u32(sender) || u32(recipient) ||
 * roster digest}, sent as {@code nonce (12) || ciphertext (64) || tag (16)}. Binding the context
 * and both indices keeps the job from replaying a share into another round or to another recipient;
 * binding the roster ({@link RosterDigest}) keeps a share from a holder shown another roster than
 * its dealer.
 */
public final class ShareCipher {
  public static final int PLAINTEXT_BYTES = 2 * Shamir.SHARE_BYTES;
  public static final int NONCE_BYTES = 12;
  public static final int TAG_BYTES = 16;
  public static final int CIPHERTEXT_BYTES = NONCE_BYTES + PLAINTEXT_BYTES + TAG_BYTES;

  private ShareCipher() {}

  /** Encrypts with a fresh random nonce from {@code random} (a CSPRNG outside tests). */
  public static byte[] encrypt(
      byte[] key,
      RoundContext ctx,
      int sender,
      int recipient,
      byte[] rosterDigest,
      byte[] plaintext,
      RandomGenerator random) {
    byte[] nonce = new byte[NONCE_BYTES];
    random.nextBytes(nonce);
    return encrypt(key, ctx, sender, recipient, rosterDigest, plaintext, nonce);
  }

  /** Encrypts with the given nonce: for test vectors. */
  static byte[] encrypt(
      byte[] key,
      RoundContext ctx,
      int sender,
      int recipient,
      byte[] rosterDigest,
      byte[] plaintext,
      byte[] nonce) {
    Bytes.requireLength("plaintext", plaintext, PLAINTEXT_BYTES);
    Bytes.requireLength("nonce", nonce, NONCE_BYTES);
    try {
      Cipher cipher =
          cipher(Cipher.ENCRYPT_MODE, key, nonce, aad(ctx, sender, recipient, rosterDigest));
      byte[] out = new byte[CIPHERTEXT_BYTES];
      System.arraycopy(nonce, 0, out, 0, NONCE_BYTES);
      cipher.doFinal(plaintext, 0, PLAINTEXT_BYTES, out, NONCE_BYTES);
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-256-GCM is unavailable", e);
    }
  }

  /**
   * The 64-byte plaintext of a share sent from {@code sender} to {@code recipient}.
   *
   * @throws ForgedShareException if the ciphertext is not 92 bytes or its tag does not verify
   */
  public static byte[] decrypt(
      byte[] key,
      RoundContext ctx,
      int sender,
      int recipient,
      byte[] rosterDigest,
      byte[] ciphertext)
      throws ForgedShareException {
    if (ciphertext.length != CIPHERTEXT_BYTES) {
      throw new ForgedShareException(
          sender,
          recipient,
          "ciphertext must be " + CIPHERTEXT_BYTES + " bytes, was " + ciphertext.length);
    }
    byte[] nonce = new byte[NONCE_BYTES];
    System.arraycopy(ciphertext, 0, nonce, 0, NONCE_BYTES);
    try {
      Cipher cipher =
          cipher(Cipher.DECRYPT_MODE, key, nonce, aad(ctx, sender, recipient, rosterDigest));
      return cipher.doFinal(ciphertext, NONCE_BYTES, CIPHERTEXT_BYTES - NONCE_BYTES);
    } catch (AEADBadTagException e) {
      throw new ForgedShareException(sender, recipient, "the GCM tag does not verify");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-256-GCM is unavailable", e);
    }
  }

  /** The associated data: {@code ctx || u32(sender) || u32(recipient) || rosterDigest}. */
  static byte[] aad(RoundContext ctx, int sender, int recipient, byte[] rosterDigest) {
    return Bytes.concat(
        ctx.bytes(),
        Bytes.u32(sender),
        Bytes.u32(recipient),
        Bytes.requireLength("rosterDigest", rosterDigest, RosterDigest.BYTES));
  }

  private static Cipher cipher(int mode, byte[] key, byte[] nonce, byte[] aad)
      throws GeneralSecurityException {
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    cipher.init(
        mode,
        new SecretKeySpec(Bytes.requireLength("key", key, 32), "AES"),
        new GCMParameterSpec(8 * TAG_BYTES, nonce));
    cipher.updateAAD(aad);
    return cipher;
  }
}
