package dev.privagg.secagg;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;
import javax.crypto.KeyAgreement;

/**
 * An X25519 key pair (RFC 7748) as the protocol's raw 32-byte strings: the private key is 32 random
 * bytes, clamped by X25519 itself when used; the public key is {@code X25519(sk, 9)}, the
 * little-endian u-coordinate.
 */
public final class X25519Keys {
  public static final int KEY_BYTES = 32;

  private static final BigInteger BASE_POINT = BigInteger.valueOf(9);

  private final byte[] privateKey;
  private final byte[] publicKey;

  private X25519Keys(byte[] privateKey) {
    this.privateKey = Bytes.requireLength("privateKey", privateKey, KEY_BYTES).clone();
    this.publicKey = multiply(this.privateKey, BASE_POINT);
  }

  /** A fresh key pair from 32 bytes of {@code random}. */
  public static X25519Keys generate(SecureRandom random) {
    byte[] privateKey = new byte[KEY_BYTES];
    random.nextBytes(privateKey);
    return new X25519Keys(privateKey);
  }

  /** The key pair of a given private key (test vectors). */
  public static X25519Keys fromPrivateKey(byte[] privateKey) {
    return new X25519Keys(privateKey);
  }

  public byte[] privateKey() {
    return privateKey.clone();
  }

  public byte[] publicKey() {
    return publicKey.clone();
  }

  /**
   * {@code X25519(privateKey, peerPublicKey)}, the shared secret.
   *
   * @throws IllegalArgumentException if the peer key has small order (the secret would be all zero
   *     whatever the private key, RFC 7748 Section 6.1), or a key is not 32 bytes
   */
  public static byte[] agree(byte[] privateKey, byte[] peerPublicKey) {
    Bytes.requireLength("peerPublicKey", peerPublicKey, KEY_BYTES);
    return multiply(privateKey, decodeU(peerPublicKey));
  }

  /**
   * RFC 7748 Section 5: the u-coordinate is little-endian with the top bit masked; values of p or
   * more are taken mod p, which Java's implementation does.
   */
  private static BigInteger decodeU(byte[] encoded) {
    byte[] bigEndian = new byte[KEY_BYTES];
    for (int i = 0; i < KEY_BYTES; i++) {
      bigEndian[i] = encoded[KEY_BYTES - 1 - i];
    }
    bigEndian[0] &= 0x7f;
    return new BigInteger(1, bigEndian);
  }

  private static byte[] multiply(byte[] privateKey, BigInteger u) {
    Bytes.requireLength("privateKey", privateKey, KEY_BYTES);
    byte[] secret;
    try {
      KeyFactory factory = KeyFactory.getInstance("XDH");
      PrivateKey scalar =
          factory.generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519, privateKey));
      PublicKey point = factory.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, u));
      KeyAgreement agreement = KeyAgreement.getInstance("XDH");
      agreement.init(scalar);
      agreement.doPhase(point, true);
      secret = agreement.generateSecret();
    } catch (InvalidKeyException e) {
      // Java refuses an all-zero result itself ("Point has small order").
      throw smallOrder();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("X25519 is required of every Java 11+ platform", e);
    }
    if (isAllZero(secret)) {
      throw smallOrder();
    }
    return secret;
  }

  private static IllegalArgumentException smallOrder() {
    return new IllegalArgumentException(
        "peerPublicKey must not have small order: the X25519 shared secret was all zero");
  }

  private static boolean isAllZero(byte[] bytes) {
    int or = 0;
    for (byte b : bytes) {
      or |= b;
    }
    return or == 0;
  }
}
