package dev.privagg.secagg;

/**
 * A client's phase-1 message, and its entry in the roster: the X25519 public keys for share
 * encryption ({@code c_pk}) and for pairwise masks ({@code s_pk}), the commitment to its self-mask
 * seed, and the Ed25519 key it signs the survivor list with in the consistency round. Each is 32
 * bytes.
 */
public record AdvertisedKeys(
    byte[] encryptionPublicKey,
    byte[] maskPublicKey,
    byte[] selfMaskCommitment,
    byte[] signingPublicKey) {
  /** The four keys, concatenated in this order: a roster entry as the job keeps it. */
  public static final int ENTRY_BYTES = 128;

  public AdvertisedKeys {
    encryptionPublicKey =
        Bytes.requireLength("encryptionPublicKey", encryptionPublicKey, 32).clone();
    maskPublicKey = Bytes.requireLength("maskPublicKey", maskPublicKey, 32).clone();
    selfMaskCommitment = Bytes.requireLength("selfMaskCommitment", selfMaskCommitment, 32).clone();
    signingPublicKey = Bytes.requireLength("signingPublicKey", signingPublicKey, 32).clone();
  }

  /** The entry of {@link #bytes()}'s layout. */
  public static AdvertisedKeys fromBytes(byte[] entry) {
    Bytes.requireLength("entry", entry, ENTRY_BYTES);
    return new AdvertisedKeys(
        java.util.Arrays.copyOfRange(entry, 0, 32),
        java.util.Arrays.copyOfRange(entry, 32, 64),
        java.util.Arrays.copyOfRange(entry, 64, 96),
        java.util.Arrays.copyOfRange(entry, 96, 128));
  }

  /** The four keys concatenated: {@link #ENTRY_BYTES} bytes. */
  public byte[] bytes() {
    return Bytes.concat(encryptionPublicKey, maskPublicKey, selfMaskCommitment, signingPublicKey);
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

  @Override
  public byte[] signingPublicKey() {
    return signingPublicKey.clone();
  }
}
