package dev.privagg.job.combine;

import dev.privagg.job.ledger.Deployment;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * The noise source a spec asks for; keyed sources read their secret here, never from the spec.
 *
 * <p>A keyed secret is text: hex (64 or more hex digits) or base64 (standard or URL-safe alphabet,
 * padded or not) decoding to at least 32 bytes, with whitespace anywhere ignored (wrapped base64, a
 * final newline). Anything else is refused with a message that says how to generate a key and never
 * repeats the secret.
 */
public final class NoiseSources {
  /** Bytes a keyed secret must decode to: a full HMAC-SHA256 / ChaCha key. */
  static final int MIN_SECRET_BYTES = 32;

  static final String HOW_TO_GENERATE =
      "generate one with `openssl rand -hex 32` or `head -c 32 /dev/urandom | base64`";

  private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]+");
  private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/]+={0,2}");
  private static final Pattern BASE64_URL = Pattern.compile("[A-Za-z0-9_-]+={0,2}");

  private NoiseSources() {}

  public static NoiseSource forSpec(JobSpec spec) {
    return forSpec(spec, (String) null);
  }

  /**
   * The spec's noise source in deployment {@code deployment} (see {@link Deployment}): keyed noise
   * mixes its nonce in; secure noise is fresh anyway, and seeded noise (not private) stays
   * reproducible across deployments for experiments.
   */
  public static NoiseSource forSpec(JobSpec spec, String deployment) {
    return forSpec(spec, deployment, System::getenv);
  }

  /** As {@link #forSpec(JobSpec)}, reading environment variables through {@code env}. */
  public static NoiseSource forSpec(JobSpec spec, UnaryOperator<String> env) {
    return forSpec(spec, null, env);
  }

  /** As {@link #forSpec(JobSpec, String)}, reading environment variables through {@code env}. */
  public static NoiseSource forSpec(JobSpec spec, String deployment, UnaryOperator<String> env) {
    JobSpec.Noise noise = spec.privacy().noise();
    return switch (noise.source()) {
      case "seeded" -> NoiseSource.seeded(noise.seed());
      case "keyed" ->
          NoiseSource.keyed(Deployment.noiseKey(secret(spec.jobId(), noise, env), deployment));
      default -> NoiseSource.secure();
    };
  }

  private static byte[] secret(String jobId, JobSpec.Noise noise, UnaryOperator<String> env) {
    if (noise.keyEnv() != null) {
      String where =
          "job " + jobId + ": environment variable " + noise.keyEnv() + " (privacy.noise.keyEnv)";
      String value = env.apply(noise.keyEnv());
      if (value == null || value.isEmpty()) {
        throw new IllegalStateException(where + " is not set; " + HOW_TO_GENERATE);
      }
      return decodeSecret(where, value);
    }
    String where = "job " + jobId + ": privacy.noise.keyFile " + noise.keyFile();
    byte[] content;
    try {
      content = Files.readAllBytes(Path.of(noise.keyFile()));
    } catch (IOException e) {
      throw new IllegalStateException(where + " cannot be read: " + e.getMessage(), e);
    }
    return decodeSecret(where, new String(content, StandardCharsets.UTF_8));
  }

  /**
   * Checks each keyed spec's secret where this process can see it (the client or JobManager that
   * defines the job), so a malformed key fails at submit instead of restarting tasks. A key only
   * the TaskManagers hold (an environment variable or file absent here) is checked when they start.
   */
  public static void checkVisibleSecrets(List<JobSpec> specs) {
    for (JobSpec spec : specs) {
      JobSpec.Noise noise = spec.privacy().noise();
      boolean visible =
          noise.source().equals("keyed")
              && (noise.keyEnv() != null
                  ? System.getenv(noise.keyEnv()) != null
                  : Files.exists(Path.of(noise.keyFile())));
      if (visible) {
        forSpec(spec);
      }
    }
  }

  /**
   * The key bytes of a hex or base64 secret (see class comment); {@code where} names its origin in
   * the error, which describes the text's form and length but never its content.
   */
  static byte[] decodeSecret(String where, String text) {
    // Whitespace anywhere is ignored: base64 tools wrap long output and files end in a newline.
    String key = text.replaceAll("\\s+", "");
    byte[] bytes;
    String form;
    if (HEX.matcher(key).matches()) {
      if (key.length() % 2 != 0) {
        throw refused(where, key.length() + " hex digits, an odd count");
      }
      bytes = HexFormat.of().parseHex(key);
      form = key.length() + " hex digits (" + bytes.length + " bytes)";
    } else if (BASE64.matcher(key).matches()) {
      bytes = base64(where, key, Base64.getDecoder(), Base64.getEncoder());
      form = "base64 of " + bytes.length + " bytes";
    } else if (BASE64_URL.matcher(key).matches()) {
      bytes = base64(where, key, Base64.getUrlDecoder(), Base64.getUrlEncoder());
      form = "URL-safe base64 of " + bytes.length + " bytes";
    } else {
      throw refused(
          where,
          key.isEmpty()
              ? "empty"
              : key.length()
                  + " characters (whitespace ignored) that are neither hex nor base64"
                  + " (a passphrase?)");
    }
    if (bytes.length < MIN_SECRET_BYTES) {
      throw refused(where, form);
    }
    return bytes;
  }

  /** Decodes canonical base64 only: re-encoding must give the same text, padding aside. */
  private static byte[] base64(
      String where, String key, Base64.Decoder decoder, Base64.Encoder encoder) {
    byte[] bytes;
    try {
      bytes = decoder.decode(key);
    } catch (IllegalArgumentException e) {
      throw refused(where, key.length() + " characters that are not valid base64");
    }
    String unpadded = key.replace("=", "");
    if (!encoder.withoutPadding().encodeToString(bytes).equals(unpadded)) {
      throw refused(where, key.length() + " characters that are not canonical base64");
    }
    return bytes;
  }

  private static IllegalArgumentException refused(String where, String was) {
    return new IllegalArgumentException(
        where
            + " must hold a noise key of at least "
            + MIN_SECRET_BYTES
            + " bytes as hex (64+ hex digits) or base64, was "
            + was
            + "; "
            + HOW_TO_GENERATE);
  }
}
