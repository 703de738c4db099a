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
              + " privagg audit (the seed file records it, and audit refuses another); hundreds"
              + " for a tight epsilon-hat.")
  int count;

  /** Refuses a count out of range, before any work. */
  void check(Flags flags) {
    if (!(count >= 2 && count <= 100_000)) {
      throw flags.fail("--count must be between 2 and 100000, was " + count);
    }
  }

  /** The canaries of a seed file, and whether the file records their count. */
  record Seed(CanarySet canaries, boolean countRecorded) {}

  /**
   * The canaries of the secret in {@link #seedFile}; a count recorded beside it other than {@code
   * --count} is refused, naming both, since every canary index past the smaller count would change
   * sides between inserted and unseen.
   */
  Seed open() throws IOException {
    CanarySecretFile.Contents contents = CanarySecretFile.read(seedFile);
    Integer recorded = contents.count();
    if (recorded != null && recorded != count) {
      throw new IllegalArgumentException(
          "--count "
              + count
              + " differs from the "
              + recorded
              + " canaries --seed-file "
              + seedFile
              + " was used with (privagg canaries recorded '"
              + CanarySecretFile.COUNT_KEY
              + " "
              + recorded
              + "' beside the secret): give --count "
              + recorded
              + ", or start another audit with a new seed file (privagg canaries --new-seed)");
    }
    return new Seed(new CanarySet(contents.secret(), count), recorded != null);
  }

  /** What to say when {@link #seedFile} records no count (a file from before counts were kept). */
  String unrecordedCount() {
    return "--seed-file "
        + seedFile
        + " records no canary count (written before privagg canaries kept one): --count "
        + count
        + " is taken on trust, and a count other than the one privagg canaries sent with gives"
        + " a meaningless audit; add the line '"
        + CanarySecretFile.COUNT_KEY
        + " K' with the count sent to the file to have it checked";
  }
}
