package dev.privagg.secagg;

import dev.privagg.secagg.Edwards25519.Point;
import java.math.BigInteger;
import java.util.random.RandomGenerator;

/**
 * A client's mask key pair in edwards25519's prime-order subgroup: the private scalar {@code s_sk}
 * in [1, l) and {@code s_pk = s_sk B}. Pairwise masks come from Diffie-Hellman in that group, and
 * {@code s_pk} is the constant term's commitment of the sharing of {@code s_sk} ({@link
 * FeldmanCommitments}), so a holder can check its share of the key before it relies on it. The
 * scalar is used as is (no clamping): it is shared and reconstructed mod l.
 */
public final class MaskKeys {
  private final BigInteger privateScalar;
  private final byte[] publicKey;

  private MaskKeys(BigInteger privateScalar) {
    this.privateScalar = privateScalar;
    this.publicKey = Edwards25519.baseTimes(privateScalar).encode();
  }

  /** A fresh key pair. */
  public static MaskKeys generate(RandomGenerator random) {
    return new MaskKeys(Edwards25519.randomScalar(random));
  }

  /** The key pair of a private key (32 bytes little-endian, in [1, l)). */
  public static MaskKeys fromPrivateKey(byte[] privateKey) {
    BigInteger scalar = Edwards25519.scalar("mask private key", privateKey);
    if (scalar.signum() == 0) {
      throw new IllegalArgumentException("mask private key must not be 0");
    }
    return new MaskKeys(scalar);
  }

  /** {@code s_sk}, 32 bytes little-endian. */
  public byte[] privateKey() {
    return Edwards25519.scalarBytes(privateScalar);
  }

  /** {@code s_pk}, 32 bytes (RFC 8032 encoding). */
  public byte[] publicKey() {
    return publicKey.clone();
  }

  /** {@code s_sk B} for a private key, as a reconstructed key is checked against the roster. */
  public static byte[] publicKeyOf(byte[] privateKey) {
    return fromPrivateKey(privateKey).publicKey();
  }

  /**
   * The Diffie-Hellman value {@code s_sk_u s_pk_v}, encoded: the same from both ends.
   *
   * @throws IllegalArgumentException if the peer's key is no point of the prime-order subgroup (the
   *     job refuses such keys at the roster, so this is a lying roster)
   */
  public static byte[] agree(byte[] privateKey, byte[] peerPublicKey) {
    return agree(privateKey, Edwards25519.decode("peer mask public key", peerPublicKey));
  }

  /** {@link #agree(byte[], byte[])} with the peer's key already decoded. */
  static byte[] agree(byte[] privateKey, Point peerPublicKey) {
    return peerPublicKey.times(Edwards25519.scalar("mask private key", privateKey)).encode();
  }
}
