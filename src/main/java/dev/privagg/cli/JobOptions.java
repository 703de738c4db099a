package dev.privagg.cli;

import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** A job and its broker, as a client names them: {@code --spec} and {@code --bootstrap-servers}. */
final class JobOptions {
  @Option(
      names = "--spec",
      required = true,
      paramLabel = "FILE",
      description = "The job's spec (YAML).")
  Path specFile;

  @Option(
      names = "--bootstrap-servers",
      required = true,
      paramLabel = "HOST:PORT",
      description = "Kafka bootstrap servers.")
  String bootstrapServers;

  JobSpec read() {
    return JobSpecReader.read(specFile);
  }
}
