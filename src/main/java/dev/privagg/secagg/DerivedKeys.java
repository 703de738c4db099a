package dev.privagg.secagg;

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
   * {@code HKDF(encode(s_sk_u s_pk_v), ctx || lp("pairwise-mask") || lp(vector) || u32(min) ||
   * u32(max))}, Diffie-Hellman in edwards25519's prime-order subgroup ({@link MaskKeys}).
   */
  public static byte[] pairwiseMaskKey(
      RoundContext ctx, byte[] maskPrivateKey, int u, byte[] maskPublicKeyOfV, int v) {
    return pairwiseMaskKey(
        ctx, maskPrivateKey, u, Edwards25519.decode("maskPublicKey", maskPublicKeyOfV), v);
  }

  /** {@link #pairwiseMaskKey(RoundContext, byte[], int, byte[], int)} with v's key decoded. */
  static byte[] pairwiseMaskKey(
      RoundContext ctx, byte[] maskPrivateKey, int u, Edwards25519.Point maskPublicKeyOfV, int v) {
    byte[] shared = MaskKeys.agree(maskPrivateKey, maskPublicKeyOfV);
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

  /**
   * {@code b_u B}: the commitment to the self-mask seed (a scalar below l), the constant term's
   * commitment of its sharing ({@link FeldmanCommitments}).
   */
  public static byte[] selfMaskCommitment(byte[] selfMaskSeed) {
    return Edwards25519.baseTimes(Edwards25519.scalar("selfMaskSeed", selfMaskSeed)).encode();
  }

  private static byte[] pair(int u, int v) {
    if (u == v) {
      throw new IllegalArgumentException("a pairwise key needs two clients, both were " + u);
    }
    return Bytes.concat(Bytes.u32(Math.min(u, v)), Bytes.u32(Math.max(u, v)));
  }
}
