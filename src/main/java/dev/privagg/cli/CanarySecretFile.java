package dev.privagg.cli;

import dev.privagg.audit.CanarySet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The canaries' secret on disk: {@value CanarySet#MIN_SECRET_BYTES} random bytes as hex, readable
 * by its owner only. Only {@code privagg canaries} and {@code privagg audit} read it; it never
 * reaches the job or a topic.
 */
final class CanarySecretFile {
  private CanarySecretFile() {}

  /** Writes a fresh secret to {@code file}; an existing file is never overwritten. */
  static void create(Path file) throws IOException {
    byte[] secret = new byte[CanarySet.MIN_SECRET_BYTES];
    new SecureRandom().nextBytes(secret);
    try {
      Files.createFile(
          file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (FileAlreadyExistsException e) {
      throw new IllegalArgumentException(
          "--seed-file " + file + " exists; --new-seed never overwrites a canary secret", e);
    } catch (UnsupportedOperationException e) {
      Files.createFile(file);
    }
    Files.writeString(file, HexFormat.of().formatHex(secret) + "\n", StandardCharsets.US_ASCII);
  }

  /** The secret in {@code file}: hex digits, whitespace ignored, at least 32 bytes. */
  static byte[] read(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException(
          "--seed-file " + file + " does not exist; create one with --new-seed");
    }
    String text = Files.readString(file, StandardCharsets.US_ASCII).replaceAll("\\s+", "");
    if (!text.matches("[0-9a-fA-F]*") || text.length() % 2 != 0) {
      throw new IllegalArgumentException(
          "--seed-file "
              + file
              + " must hold an even number of hex digits, as --new-seed writes; it holds "
              + text.length()
              + " other characters");
    }
    byte[] secret = HexFormat.of().parseHex(text);
    if (secret.length < CanarySet.MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(
          "--seed-file "
              + file
              + " holds "
              + secret.length
              + " bytes; a canary secret needs at least "
              + CanarySet.MIN_SECRET_BYTES);
    }
    return secret;
  }
}
