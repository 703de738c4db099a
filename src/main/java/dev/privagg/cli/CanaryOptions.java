package dev.privagg.cli;

import dev.privagg.audit.CanarySet;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The canaries of an audit as both commands name them: the secret's file and how many. {@code
 * privagg canaries} and {@code privagg audit} must be given the same two.
 */
final class CanaryOptions {
  @Option(
      names = "--seed-file",
      required = true,
      paramLabel = "FILE",
      description =
          "The canaries' secret (hex, at least 32 bytes), the same file for privagg canaries and"
              + " privagg audit; privagg canaries --new-seed creates one.")
  Path seedFile;

  @Option(
      names = "--count",
      required = true,
      paramLabel = "K",
      description =
          "Canaries inserted (as many more stay unseen), the same for privagg canaries and"
              + " privagg audit; hundreds for a tight epsilon-hat.")
  int count;

  /** Refuses a count out of range, before any work. */
  void check(Flags flags) {
    if (!(count >= 2 && count <= 100_000)) {
      throw flags.fail("--count must be between 2 and 100000, was " + count);
    }
  }

  /** The canaries of the secret in {@link #seedFile}. */
  CanarySet canaries() throws IOException {
    return new CanarySet(CanarySecretFile.read(seedFile), count);
  }
}
