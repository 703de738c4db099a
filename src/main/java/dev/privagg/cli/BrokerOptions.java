package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The brokers of a command that needs them named: {@code --bootstrap-servers} (required) and {@code
 * --kafka-properties}.
 */
final class BrokerOptions {
  @Option(
      names = "--bootstrap-servers",
      required = true,
      paramLabel = "HOST:PORT",
      description = "Kafka bootstrap servers.")
  String bootstrapServers;

  @Mixin KafkaPropertiesOption kafkaProperties;

  /** The connection to the brokers, with the {@code --kafka-properties} settings. */
  KafkaConnection connection() {
    return kafkaProperties.connect(bootstrapServers);
  }
}
