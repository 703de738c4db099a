package dev.privagg.bench;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The ceiling: a plain Kafka consumer reading the updates topic as raw bytes, with the fetch sizes
 * and isolation level the job's source uses. No pipeline can read the topic faster.
 */
final class KafkaCeiling {
  private KafkaCeiling() {}

  /** Bytes of record values read and the seconds it took. */
  record Read(long records, long valueBytes, double seconds) {
    double megabytesPerSecond() {
      return valueBytes / 1e6 / seconds;
    }
  }

  /** Reads partition 0 of {@code topic} from its start up to {@code endOffset}. */
  static Read read(String bootstrapServers, String topic, long endOffset, long maxRecordBytes) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(
        ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG,
        Long.toString(Math.max(maxRecordBytes, 1 << 20)));
    c.put(
        ConsumerConfig.FETCH_MAX_BYTES_CONFIG, Long.toString(Math.max(maxRecordBytes, 50L << 20)));
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      consumer.position(partition); // connects and resolves the start before the clock starts
      long records = 0;
      long bytes = 0;
      long offset = 0;
      long started = System.nanoTime();
      while (offset < endOffset) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
          records++;
          bytes += r.value() == null ? 0 : r.value().length;
          offset = r.offset() + 1;
        }
      }
      return new Read(records, bytes, (System.nanoTime() - started) / 1e9);
    }
  }
}
