package dev.privagg.secagg;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.NamedParameterSpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;

/**
 * An Ed25519 key pair (RFC 8032) for the consistency round: the private key is 32 random bytes, the
 * public key its 32-byte RFC 8032 encoding, signatures 64 bytes. Signing is deterministic.
 */
public final class SigningKeys {
  public static final int KEY_BYTES = 32;
  public static final int SIGNATURE_BYTES = 64;

  // The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the raw key follows it.
  private static final byte[] X509_PREFIX = {
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00
  };

  private final PrivateKey privateKey;
  private final byte[] publicKey;

  private SigningKeys(byte[] seed) {
    try {
      KeyFactory factory = KeyFactory.getInstance("Ed25519");
      this.privateKey =
          factory.generatePrivate(new EdECPrivateKeySpec(NamedParameterSpec.ED25519, seed));
      // The JDK derives a public key only when it generates the pair: feed it exactly the seed.
      KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
      generator.initialize(NamedParameterSpec.ED25519, new FixedBytes(seed));
      byte[] encoded = generator.generateKeyPair().getPublic().getEncoded();
      this.publicKey = Arrays.copyOfRange(encoded, X509_PREFIX.length, encoded.length);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Ed25519 is not available in this JDK", e);
    }
  }

  /** A fresh key pair from 32 bytes of {@code random}. */
  public static SigningKeys generate(SecureRandom random) {
    byte[] seed = new byte[KEY_BYTES];
    random.nextBytes(seed);
    return new SigningKeys(seed);
  }

  /** The key pair of a given 32-byte private key (test vectors). */
  public static SigningKeys fromPrivateKey(byte[] privateKey) {
    return new SigningKeys(Bytes.requireLength("privateKey", privateKey, KEY_BYTES).clone());
  }

  public byte[] publicKey() {
    return publicKey.clone();
  }

  /** The 64-byte Ed25519 signature of {@code message}. */
  public byte[] sign(byte[] message) {
    try {
      Signature signer = Signature.getInstance("Ed25519");
      signer.initSign(privateKey);
      signer.update(message);
      return signer.sign();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Ed25519 signing failed", e);
    }
  }

  // The points of order 1, 2, 4 and 8 and the non-canonical encodings of 0 and 1, sign bit
  // cleared: under such a key a signature of the identity verifies for many messages.
  private static final byte[][] SMALL_ORDER =
      java.util.stream.Stream.of(
              "0000000000000000000000000000000000000000000000000000000000000000",
              "0100000000000000000000000000000000000000000000000000000000000000",
              "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
              "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
              "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
              "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
              "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
          .map(java.util.HexFormat.of()::parseHex)
          .toArray(byte[][]::new);

  /** Whether the 32-byte {@code publicKey} is a point of small order (or encodes one). */
  public static boolean hasSmallOrder(byte[] publicKey) {
    byte[] key = publicKey.clone();
    key[KEY_BYTES - 1] &= 0x7f;
    for (byte[] weak : SMALL_ORDER) {
      if (Arrays.equals(key, weak)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code signature} is a valid Ed25519 signature of {@code message} under the 32-byte
   * {@code publicKey}; false (never an exception) for malformed keys or signatures, and for keys of
   * small order, under which signatures nobody made verify.
   */
  public static boolean verify(byte[] publicKey, byte[] message, byte[] signature) {
    if (publicKey == null
        || publicKey.length != KEY_BYTES
        || hasSmallOrder(publicKey)
        || signature == null
        || signature.length != SIGNATURE_BYTES) {
      return false;
    }
    try {
      PublicKey key =
          KeyFactory.getInstance("Ed25519")
              .generatePublic(new X509EncodedKeySpec(Bytes.concat(X509_PREFIX, publicKey)));
      Signature verifier = Signature.getInstance("Ed25519");
      verifier.initVerify(key);
      verifier.update(message);
      return verifier.verify(signature);
    } catch (GeneralSecurityException | RuntimeException e) {
      return false; // a key that is no curve point, or a signature the provider cannot parse
    }
  }

  /** Hands a key generator exactly the seed, so the pair it makes is the seed's. */
  static final class FixedBytes extends SecureRandom {
    private static final long serialVersionUID = 1L;
    private final byte[] bytes;

    FixedBytes(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public void nextBytes(byte[] out) {
      System.arraycopy(bytes, 0, out, 0, out.length);
    }
  }
}
