package dev.privagg.secagg;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The keys of the protocol's table "Derived keys", each bound to the round's {@code ctx} and to the
 * clients' roster indices. Pairwise keys name the pair as {@code (min, max)}, so both ends derive
 * the same key.
 */
public final class DerivedKeys {
  /** The one vector of protocol version 1. */
  public static final String VECTOR = "model";

  private DerivedKeys() {}

  /**
   * {@code HKDF(X25519(c_sk_u, c_pk_v), ctx || lp("share-encryption") || u32(min) || u32(max))}.
   */
  public static byte[] shareEncryptionKey(
      RoundContext ctx, byte[] encryptionPrivateKey, int u, byte[] encryptionPublicKeyOfV, int v) {
    byte[] shared = X25519Keys.agree(encryptionPrivateKey, encryptionPublicKeyOfV);
    return Hkdf.derive(shared, Bytes.concat(ctx.bytes(), Bytes.lp("share-encryption"), pair(u, v)));
  }

  /**
   * {@code HKDF(X25519(s_sk_u, s_pk_v), ctx || lp("pairwise-mask") || lp(vector) || u32(min) ||
   * u32(max))}.
   */
  public static byte[] pairwiseMaskKey(
      RoundContext ctx, byte[] maskPrivateKey, int u, byte[] maskPublicKeyOfV, int v) {
    byte[] shared = X25519Keys.agree(maskPrivateKey, maskPublicKeyOfV);
    return Hkdf.derive(
        shared, Bytes.concat(ctx.bytes(), Bytes.lp("pairwise-mask"), Bytes.lp(VECTOR), pair(u, v)));
  }

  /** {@code HKDF(b_u, ctx || lp("self-mask") || lp(vector) || u32(u))}. */
  public static byte[] selfMaskKey(RoundContext ctx, byte[] selfMaskSeed, int u) {
    Bytes.requireLength("selfMaskSeed", selfMaskSeed, 32);
    return Hkdf.derive(
        selfMaskSeed,
        Bytes.concat(ctx.bytes(), Bytes.lp("self-mask"), Bytes.lp(VECTOR), Bytes.u32(u)));
  }

  /** {@code SHA-256(ctx || lp("self-mask-commitment") || b_u)}. */
  public static byte[] selfMaskCommitment(RoundContext ctx, byte[] selfMaskSeed) {
    Bytes.requireLength("selfMaskSeed", selfMaskSeed, 32);
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      return sha256.digest(
          Bytes.concat(ctx.bytes(), Bytes.lp("self-mask-commitment"), selfMaskSeed));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  private static byte[] pair(int u, int v) {
    if (u == v) {
      throw new IllegalArgumentException("a pairwise key needs two clients, both were " + u);
    }
    return Bytes.concat(Bytes.u32(Math.min(u, v)), Bytes.u32(Math.max(u, v)));
  }
}
