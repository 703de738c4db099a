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

  /** Longer than any secret written by hand or by {@link #create}: not a secret file. */
  private static final long MAX_FILE_BYTES = 64 * 1024;

  /** The secret in {@code file}: hex digits, whitespace ignored, at least 32 bytes. */
  static byte[] read(Path file) throws IOException {
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(
          "--seed-file "
              + file
              + " does not exist; create one with privagg canaries --new-seed, and give the same"
              + " file to privagg audit");
    }
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException(
          "--seed-file " + file + " is not a regular file; give the file --new-seed wrote");
    }
    if (Files.size(file) > MAX_FILE_BYTES) {
      throw new IllegalArgumentException(
          "--seed-file "
              + file
              + " holds "
              + Files.size(file)
              + " bytes, too many for a canary secret (hex digits, as --new-seed writes)");
    }
    // Bytes, not a decoded string: a non-ASCII byte is then placed, not a charset exception. Like
    // the job's key errors, the message names where, never what: the file holds a secret.
    byte[] raw = Files.readAllBytes(file);
    StringBuilder hex = new StringBuilder(raw.length);
    for (int i = 0; i < raw.length; i++) {
      char c = (char) (raw[i] & 0xff);
      if (Character.digit(c, 16) >= 0 && c < 0x80) {
        hex.append(c);
      } else if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
        throw new IllegalArgumentException(
            "--seed-file "
                + file
                + " must hold hex digits only (whitespace ignored), as --new-seed writes; byte "
                + i
                + " is neither a hex digit nor whitespace");
      }
    }
    if (hex.length() % 2 != 0) {
      throw new IllegalArgumentException(
          "--seed-file "
              + file
              + " holds an odd number of hex digits ("
              + hex.length()
              + "); a secret is whole bytes, two digits each");
    }
    byte[] secret = HexFormat.of().parseHex(hex);
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
