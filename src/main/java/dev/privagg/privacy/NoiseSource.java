package dev.privagg.privacy;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Where the Gaussian noise of a release comes from (design.md invariant 6). Every release asks for
 * one {@link NoiseStream} per (jobId, round); every source but {@link #zero()} samples with {@link
 * ChaChaGaussianStream} (ChaCha bits, Holohan-Braghin sum of two normals), so the sources differ
 * only in how the ChaCha key is chosen:
 *
 * <ul>
 *   <li>{@link #secure()}: a fresh 256-bit key per stream from the operating system's {@link
 *       SecureRandom}. The production default.
 *   <li>{@link #keyed(byte[])}: key = HMAC-SHA256(secret, jobId, round), the secret at least 32
 *       bytes. The same secret, job and round always give the same stream, so a round recomputed
 *       after a failure releases the identical model; without the secret the noise is
 *       unpredictable.
 *   <li>{@link #seeded(long)}: key = SHA-256(seed, jobId, round). Reproducible experiments and
 *       tests only: anyone who knows the seed can remove the noise.
 *   <li>{@link #zero()}: no noise, for exact pipeline tests.
 * </ul>
 */
public sealed interface NoiseSource extends Serializable {
  /** The noise stream for one release. */
  NoiseStream forRound(String jobId, long round);

  /**
   * The name published with a model: {@code secure}, {@code keyed}, {@code seeded}, {@code zero}.
   */
  String kind();

  /** Whether one (jobId, round) always gives the same stream: all but {@link #secure()}. */
  default boolean reproducible() {
    return true;
  }

  /** Fresh OS-seeded randomness for every stream. */
  static NoiseSource secure() {
    return new Secure();
  }

  /**
   * Reproducible noise from a secret key of at least 32 bytes, as many as the ChaCha key derived
   * from it (see class comment).
   */
  static NoiseSource keyed(byte[] secretKey) {
    return new Keyed(secretKey);
  }

  /** Deterministic noise from a public seed: tests and experiments only. */
  static NoiseSource seeded(long seed) {
    return new Seeded(seed);
  }

  /** No noise at all. */
  static NoiseSource zero() {
    return new Zero();
  }

  /** OS-seeded CSPRNG key per stream. */
  final class Secure implements NoiseSource {
    private static final long serialVersionUID = 1L;
    private static final SecureRandom OS_RANDOM = new SecureRandom();

    private Secure() {}

    @Override
    public NoiseStream forRound(String jobId, long round) {
      byte[] key = new byte[32];
      OS_RANDOM.nextBytes(key);
      return new ChaChaGaussianStream(new ChaCha(key, 0));
    }

    @Override
    public String kind() {
      return "secure";
    }

    @Override
    public boolean reproducible() {
      return false;
    }

    @Override
    public String toString() {
      return kind();
    }
  }

  /** HMAC-SHA256-derived key per (jobId, round). */
  final class Keyed implements NoiseSource {
    private static final long serialVersionUID = 1L;
    private static final int MIN_KEY_BYTES = 32;
    private final byte[] secretKey;

    private Keyed(byte[] secretKey) {
      if (secretKey == null || secretKey.length < MIN_KEY_BYTES) {
        throw new IllegalArgumentException(
            "noise key must hold at least "
                + MIN_KEY_BYTES
                + " bytes, was "
                + (secretKey == null ? "null" : secretKey.length + " bytes"));
      }
      this.secretKey = secretKey.clone();
    }

    @Override
    public NoiseStream forRound(String jobId, long round) {
      try {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secretKey, "HmacSHA256"));
        byte[] key = mac.doFinal(streamLabel("privagg/keyed-noise/v1", jobId, round));
        return new ChaChaGaussianStream(new ChaCha(key, 0));
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("HmacSHA256 is required by every Java platform", e);
      }
    }

    @Override
    public String kind() {
      return "keyed";
    }

    @Override
    public String toString() {
      return "keyed(<secret>)";
    }
  }

  /** SHA-256-derived key per (seed, jobId, round). */
  record Seeded(long seed) implements NoiseSource {
    @Override
    public NoiseStream forRound(String jobId, long round) {
      try {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        sha.update(ByteBuffer.allocate(Long.BYTES).putLong(seed).array());
        byte[] key = sha.digest(streamLabel("privagg/seeded-noise/v1", jobId, round));
        return new ChaChaGaussianStream(new ChaCha(key, 0));
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("SHA-256 is required by every Java platform", e);
      }
    }

    @Override
    public String kind() {
      return "seeded";
    }
  }

  /** Always zero. */
  record Zero() implements NoiseSource {
    @Override
    public NoiseStream forRound(String jobId, long round) {
      return new NoiseStream() {
        @Override
        public double nextStandardNormal() {
          return 0.0;
        }

        @Override
        public double nextUniform() {
          return 0.0;
        }

        @Override
        public java.util.random.RandomGenerator bits() {
          // An exact sampler would wait forever for a coin that is never 1.
          throw new IllegalStateException(
              "the zero noise source draws no discrete Gaussian shares; use seeded noise");
        }
      };
    }

    @Override
    public String kind() {
      return "zero";
    }
  }

  /** Unambiguous encoding of (label, jobId, round): length-prefixed strings, then the round. */
  private static byte[] streamLabel(String label, String jobId, long round) {
    byte[] labelBytes = label.getBytes(StandardCharsets.UTF_8);
    byte[] job = jobId.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(4 + labelBytes.length + 4 + job.length + 8)
        .putInt(labelBytes.length)
        .put(labelBytes)
        .putInt(job.length)
        .put(job)
        .putLong(round)
        .array();
  }
}
