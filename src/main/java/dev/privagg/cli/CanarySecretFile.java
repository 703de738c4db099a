package dev.privagg.cli;

import dev.privagg.audit.CanarySet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The canaries' secret on disk: {@value CanarySet#MIN_SECRET_BYTES} random bytes as hex, readable
 * by its owner only, and beside it a line {@code count: K}, the number of canaries {@code privagg
 * canaries} sent with it, so that {@code privagg audit} can refuse another count (which would score
 * sent canaries as unseen, or unsent ones as inserted). Only those two commands read it; it never
 * reaches the job or a topic. Files written before the count was recorded hold the hex alone and
 * are still read: the count is then unknown until {@code privagg canaries} next uses the file.
 */
final class CanarySecretFile {
  private CanarySecretFile() {}

  /** The line that records the canary count, followed by the count. */
  static final String COUNT_KEY = "count:";

  /** What a seed file holds: the secret, and the canary count recorded beside it or null. */
  record Contents(byte[] secret, Integer count) {}

  /**
   * Writes a fresh secret to {@code file} with the {@code count} of canaries it is used with; an
   * existing file is never overwritten.
   */
  static void create(Path file, int count) throws IOException {
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
    Files.writeString(
        file,
        HexFormat.of().formatHex(secret) + "\n" + COUNT_KEY + " " + count + "\n",
        StandardCharsets.US_ASCII);
  }

  /**
   * Appends {@code count} to a file that records none (one written before counts were recorded), on
   * its own line.
   */
  static void recordCount(Path file, int count) throws IOException {
    byte[] raw = Files.readAllBytes(file);
    boolean endsInNewline = raw.length == 0 || raw[raw.length - 1] == '\n';
    Files.writeString(
        file,
        (endsInNewline ? "" : "\n") + COUNT_KEY + " " + count + "\n",
        StandardCharsets.US_ASCII,
        StandardOpenOption.APPEND);
  }

  /** Longer than any secret written by hand or by {@link #create}: not a secret file. */
  private static final long MAX_FILE_BYTES = 64 * 1024;

  /**
   * The secret in {@code file} (hex digits, whitespace ignored, at least 32 bytes) and the count on
   * its {@code count: K} line, null when it has none.
   */
  static Contents read(Path file) throws IOException {
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
    Integer count = null;
    int line = 1;
    boolean lineStart = true;
    for (int i = 0; i < raw.length; i++) {
      char c = (char) (raw[i] & 0xff);
      if (lineStart && startsWith(raw, i, COUNT_KEY)) {
        int end = i;
        while (end < raw.length && raw[end] != '\n') {
          end++;
        }
        if (count != null) {
          throw new IllegalArgumentException(
              "--seed-file " + file + " line " + line + ": a second " + COUNT_KEY + " line");
        }
        count = parseCount(file, line, new String(raw, i, end - i, StandardCharsets.US_ASCII));
        i = end - 1;
        continue;
      }
      if (c == '\n') {
        line++;
        lineStart = true;
      } else if (!(c == ' ' || c == '\t' || c == '\r')) {
        lineStart = false;
      }
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
    return new Contents(secret, count);
  }

  private static boolean startsWith(byte[] raw, int at, String prefix) {
    if (raw.length - at < prefix.length()) {
      return false;
    }
    for (int k = 0; k < prefix.length(); k++) {
      if (raw[at + k] != prefix.charAt(k)) {
        return false;
      }
    }
    return true;
  }

  /** The count of a {@code count: K} line; the count is no secret, so a bad one is shown. */
  private static int parseCount(Path file, int line, String text) {
    String value = text.substring(COUNT_KEY.length()).strip();
    try {
      int count = Integer.parseInt(value);
      if (count >= 2 && count <= 100_000) {
        return count;
      }
    } catch (NumberFormatException e) {
      // Reported below with the rule.
    }
    throw new IllegalArgumentException(
        "--seed-file "
            + file
            + " line "
            + line
            + ": the canary count must be a whole number between 2 and 100000, as privagg"
            + " canaries writes it ("
            + COUNT_KEY
            + " K), was '"
            + value
            + "'");
  }
}
