package dev.privagg.cli;

import picocli.CommandLine.Option;

/** The {@code --json} flag of the commands whose output scripts read. */
final class JsonOption {
  @Option(
      names = "--json",
      description =
          "Print the result as JSON: one object, or one object per line where the command"
              + " streams progress.")
  boolean enabled;
}
