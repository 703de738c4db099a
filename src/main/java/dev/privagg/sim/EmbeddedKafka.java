package dev.privagg.sim;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real single-node KRaft broker (combined broker and controller) inside this JVM, for the demo
 * and simulations without a broker of their own. Closing it stops it and deletes its logs.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private final KafkaClusterTestKit cluster;
  private final Thread shutdownHook;
  private boolean closed;

  private EmbeddedKafka(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
    // Ctrl-C skips try-with-resources; the hook still stops the broker and deletes its logs.
    this.shutdownHook = new Thread(this::closeQuietly, "embedded-kafka-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
  }

  /** Formats and starts the broker; returns when it accepts clients. */
  public static EmbeddedKafka start() throws Exception {
    KafkaClusterTestKit cluster =
        new KafkaClusterTestKit.Builder(
                new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(1)
                    .setNumControllerNodes(1)
                    .build())
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            .setDeleteOnClose(true)
            .build();
    // The test kit prints its formatting step to stdout; keep the user's output clean.
    java.io.PrintStream stdout = System.out;
    System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
    try {
      cluster.format();
    } finally {
      System.setOut(stdout);
    }
    cluster.startup();
    cluster.waitForReadyBrokers();
    return new EmbeddedKafka(cluster);
  }

  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  /** A plaintext connection to this broker. */
  public dev.privagg.io.KafkaConnection connection() {
    return dev.privagg.io.KafkaConnection.to(bootstrapServers());
  }

  @Override
  public synchronized void close() throws Exception {
    if (closed) {
      return;
    }
    closed = true;
    cluster.close();
    if (Thread.currentThread() != shutdownHook) {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    }
  }

  private void closeQuietly() {
    try {
      close();
    } catch (Exception e) {
      System.err.println("could not stop the in-process Kafka broker cleanly: " + e);
    }
  }
}
