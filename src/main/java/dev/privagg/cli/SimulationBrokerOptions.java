package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import dev.privagg.sim.EmbeddedKafka;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The broker of a simulation: an existing one ({@code --bootstrap-servers}, with {@code
 * --kafka-properties}), or else one started in-process for the run and stopped after it.
 */
final class SimulationBrokerOptions {
  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "An existing Kafka broker (default: start one in-process).")
  String bootstrapServers;

  @Mixin KafkaPropertiesOption kafkaProperties;

  /** Work to do on a broker. */
  interface Work<T> {
    T on(KafkaConnection kafka) throws Exception;
  }

  /** True when no broker was named, so {@link #run} starts one in-process. */
  boolean inProcess() {
    return bootstrapServers == null;
  }

  /** The connection to the named broker, or null when the run starts its own. */
  KafkaConnection connection() {
    return inProcess() ? null : kafkaProperties.connect(bootstrapServers);
  }

  /** Does {@code work} on the named broker, or on one started in-process and stopped after it. */
  <T> T run(Work<T> work) throws Exception {
    if (!inProcess()) {
      return work.on(connection());
    }
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      return work.on(kafka.connection());
    }
  }
}
