package dev.privagg.secagg;

/**
 * A client's phase-1 message, and its entry in the roster: the X25519 public keys for share
 * encryption ({@code c_pk}) and for pairwise masks ({@code s_pk}), and the commitment to its
 * self-mask seed. Each is 32 bytes.
 */
public record AdvertisedKeys(
    byte[] encryptionPublicKey, byte[] maskPublicKey, byte[] selfMaskCommitment) {
  public AdvertisedKeys {
    encryptionPublicKey =
        Bytes.requireLength("encryptionPublicKey", encryptionPublicKey, 32).clone();
    maskPublicKey = Bytes.requireLength("maskPublicKey", maskPublicKey, 32).clone();
    selfMaskCommitment = Bytes.requireLength("selfMaskCommitment", selfMaskCommitment, 32).clone();
  }

  @Override
  public byte[] encryptionPublicKey() {
    return encryptionPublicKey.clone();
  }

  @Override
  public byte[] maskPublicKey() {
    return maskPublicKey.clone();
  }

  @Override
  public byte[] selfMaskCommitment() {
    return selfMaskCommitment.clone();
  }
}
