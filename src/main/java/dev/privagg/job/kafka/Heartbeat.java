package dev.privagg.job.kafka;

import dev.privagg.io.KafkaConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.flink.metrics.Counter;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes an empty tick record to every partition of the updates topic at a fixed interval. With
 * LogAppendTime the broker stamps each tick, so every partition's event time advances even when no
 * client sends: rounds then close on event-time timers, and which updates a round holds is a
 * function of the topic's contents alone, identical when a round is replayed after a failure.
 */
public final class Heartbeat implements AutoCloseable {
  /** Key of tick records; the decode step drops them before any validation. */
  static final byte[] TICK_KEY = "__privagg_tick__".getBytes(StandardCharsets.UTF_8);

  private static final Logger LOG = LoggerFactory.getLogger(Heartbeat.class);

  private final KafkaProducer<byte[], byte[]> producer;
  private final ScheduledExecutorService timer;
  private final Counter failures;
  // Partitions whose last tick failed (-1: the topic's partitions could not be listed).
  private final java.util.Set<Integer> failing = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * @param failures counts ticks that could not be written: while they fail, event time stands
   *     still and no round closes, which the log and this counter make visible
   */
  public Heartbeat(KafkaConnection kafka, String topic, long intervalMillis, Counter failures) {
    this.failures = failures;
    Properties props = kafka.clientProperties();
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "privagg-heartbeat");
              t.setDaemon(true);
              return t;
            });
    timer.scheduleAtFixedRate(() -> tick(topic), 0, intervalMillis, TimeUnit.MILLISECONDS);
  }

  private void tick(String topic) {
    try {
      for (PartitionInfo partition : producer.partitionsFor(topic)) {
        producer.send(
            new ProducerRecord<>(topic, partition.partition(), TICK_KEY, new byte[0]),
            (metadata, error) -> outcome(topic, partition.partition(), error));
      }
      outcome(topic, -1, null);
    } catch (RuntimeException e) {
      outcome(topic, -1, e);
    }
  }

  /**
   * Logs a partition's first failed tick and the recovery of the last failing partition (not every
   * tick), and counts every failure. Event time is the minimum over partitions: one partition
   * without ticks holds every round.
   */
  private void outcome(String topic, int partition, Exception error) {
    if (error == null) {
      if (failing.remove(partition) && failing.isEmpty()) {
        LOG.info("heartbeat ticks to every partition of {} are written again", topic);
      }
      return;
    }
    failures.inc();
    if (failing.add(partition)) {
      LOG.warn(
          "heartbeat tick to {} partition {} failed: event time, and with it every round close,"
              + " waits until ticks are written again",
          topic,
          partition,
          error);
    }
  }

  /**
   * A tick has the tick key and an empty value. Anything else, even with the tick key, is a client
   * record and is validated (and rejected if bad), never dropped silently.
   */
  public static boolean isTick(byte[] key, byte[] value) {
    return key != null
        && value != null
        && value.length == 0
        && java.util.Arrays.equals(key, TICK_KEY);
  }

  @Override
  public void close() {
    timer.shutdownNow();
    producer.close(Duration.ofSeconds(2));
  }
}
