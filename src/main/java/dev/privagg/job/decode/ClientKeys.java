package dev.privagg.job.decode;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/**
 * Fixed-size keys for the client ids seen in a round: the first 128 bits of SHA-256 of the id's
 * UTF-8 bytes, base64 (22 characters). A round's duplicate check then costs the same state per
 * client whatever id length clients choose. Two ids share a key only by a SHA-256 collision on 128
 * bits (about 2^64 work to find one pair); the worst it could do is reject one client's update as a
 * duplicate. Not thread-safe: one instance per operator instance.
 */
public final class ClientKeys {
  private static final int KEY_BYTES = 16;
  private final MessageDigest sha256;

  public ClientKeys() {
    try {
      sha256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform must provide SHA-256", e);
    }
  }

  /** The key of {@code clientId}. */
  public String of(String clientId) {
    byte[] digest = sha256.digest(clientId.getBytes(StandardCharsets.UTF_8));
    return Base64.getEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, KEY_BYTES));
  }
}
