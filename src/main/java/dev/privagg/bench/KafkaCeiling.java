package dev.privagg.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The ceiling: plain Kafka consumers reading the updates topic as raw bytes, with the fetch sizes
 * and isolation level the job's source uses, one consumer thread per reader of the job's source
 * (its partitions dealt out the same way). No pipeline with that many readers can read the topic
 * faster.
 */
final class KafkaCeiling {
  private KafkaCeiling() {}

  /** Bytes of record values read and the seconds it took. */
  record Read(long records, long valueBytes, double seconds) {
    double megabytesPerSecond() {
      return valueBytes / 1e6 / seconds;
    }
  }

  /**
   * Reads every partition of {@code topic} from its start to its current end with {@code readers}
   * consumers at once; the time runs from their common start to the last one's end.
   */
  static Read read(String bootstrapServers, String topic, int readers, long maxRecordBytes)
      throws InterruptedException, ExecutionException {
    List<TopicPartition> partitions = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> probe = consumer(bootstrapServers, maxRecordBytes)) {
      for (PartitionInfo info : probe.partitionsFor(topic)) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
    }
    partitions.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
    int threads = Math.min(readers, partitions.size());
    List<List<TopicPartition>> shares = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      shares.add(new ArrayList<>());
    }
    for (int i = 0; i < partitions.size(); i++) {
      shares.get(i % threads).add(partitions.get(i));
    }
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<long[]>> reads = new ArrayList<>();
      for (List<TopicPartition> share : shares) {
        reads.add(pool.submit(() -> readShare(bootstrapServers, maxRecordBytes, share, ready, go)));
      }
      if (!ready.await(2, TimeUnit.MINUTES)) {
        for (Future<long[]> read : reads) {
          if (read.isDone()) {
            read.get(); // a consumer that failed to start: its error
          }
        }
        throw new IllegalStateException("the ceiling's consumers did not start in 2 minutes");
      }
      long started = System.nanoTime();
      go.countDown();
      long records = 0;
      long bytes = 0;
      for (Future<long[]> read : reads) {
        long[] counts = read.get();
        records += counts[0];
        bytes += counts[1];
      }
      return new Read(records, bytes, (System.nanoTime() - started) / 1e9);
    } finally {
      pool.shutdownNow();
    }
  }

  /** One consumer's share: connects and resolves its positions, then reads once told to go. */
  private static long[] readShare(
      String bootstrapServers,
      long maxRecordBytes,
      List<TopicPartition> share,
      CountDownLatch ready,
      CountDownLatch go)
      throws InterruptedException {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrapServers, maxRecordBytes)) {
      consumer.assign(share);
      consumer.seekToBeginning(share);
      // read_committed: the end is the last stable offset; records before it are all readable.
      Map<TopicPartition, Long> ends = consumer.endOffsets(share);
      List<TopicPartition> open = new ArrayList<>(share);
      open.removeIf(p -> consumer.position(p) >= ends.get(p));
      ready.countDown();
      go.await();
      long records = 0;
      long bytes = 0;
      while (!open.isEmpty()) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
          records++;
          bytes += r.value() == null ? 0 : r.value().length;
        }
        open.removeIf(p -> consumer.position(p) >= ends.get(p));
      }
      return new long[] {records, bytes};
    }
  }

  private static KafkaConsumer<byte[], byte[]> consumer(
      String bootstrapServers, long maxRecordBytes) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(
        ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG,
        Long.toString(Math.max(maxRecordBytes, 1 << 20)));
    c.put(
        ConsumerConfig.FETCH_MAX_BYTES_CONFIG, Long.toString(Math.max(maxRecordBytes, 50L << 20)));
    return new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }
}
