package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --kafka-properties FILE} option of every command that talks to Kafka. */
final class KafkaPropertiesOption {
  @Option(
      names = "--kafka-properties",
      paramLabel = "FILE",
      description =
          "Kafka client properties for secured brokers (Java properties: security.protocol, sasl.*,"
              + " ssl.*); used by every Kafka client the command creates; values are never printed.")
  Path file;

  /** The connection to {@code bootstrapServers} with this file's settings. */
  KafkaConnection connect(String bootstrapServers) {
    return KafkaConnection.of(bootstrapServers, file);
  }
}
