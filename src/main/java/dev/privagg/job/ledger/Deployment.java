package dev.privagg.job.ledger;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A deployment of a job id: the topics one ledger records. Its nonce is 128 random bits, drawn when
 * a job id first starts on a ledger that records none, written in every ledger entry and internal
 * release, and read back by every later start ({@link LedgerReconciler}). Keyed noise is derived
 * from the secret and this nonce: recreating every topic with the same key, job id and topic names
 * is a new deployment with other noise, so a reader who kept a round's old model cannot subtract
 * its noise from the new one. Within a deployment (failover, restore, resubmit) the nonce, and with
 * it keyed noise, stays the same.
 */
public final class Deployment {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Pattern NONCE = Pattern.compile("[0-9a-f]{32}");

  private Deployment() {}

  /** A fresh nonce: 32 lowercase hex digits. */
  public static String fresh() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** Whether {@code text} is a nonce this class writes; others found on a topic are ignored. */
  public static boolean isNonce(String text) {
    return text != null && NONCE.matcher(text).matches();
  }

  /**
   * The key keyed noise uses in deployment {@code nonce}: HMAC-SHA256(secret, label || nonce), a
   * pseudo-random function of the nonce under the secret (RFC 2104); the secret itself without a
   * nonce (states and tests from before deployments).
   */
  public static byte[] noiseKey(byte[] secret, String nonce) {
    if (nonce == null) {
      return secret;
    }
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      return mac.doFinal(("privagg/deployment/" + nonce).getBytes(StandardCharsets.US_ASCII));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }
}
