package dev.privagg.cli;

import picocli.CommandLine.Option;

/** The {@code --json} flag every command offers. */
final class JsonOption {
  @Option(names = "--json", description = "Print the result as one JSON object.")
  boolean enabled;
}
