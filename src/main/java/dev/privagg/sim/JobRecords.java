package dev.privagg.sim;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.KafkaConnection;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What a simulation's job did with the updates, read from its operator topics once the last model
 * is out: how many updates the released rounds summed (the ledger's exact {@code contributions},
 * which only the operator sees, and the simulation is the operator) and the rejects by reason.
 */
final class JobRecords {
  private JobRecords() {}

  /** Updates the released rounds summed, and each reject reason's count. */
  record Tally(long updatesUsed, Map<String, Long> rejects) {
    /** Rejects for one of {@code reasons}. */
    long rejected(List<String> reasons) {
      return reasons.stream().mapToLong(r -> rejects.getOrDefault(r, 0L)).sum();
    }
  }

  /** Reads the ledger and rejects topics of {@code spec} up to their committed end. */
  static Tally read(KafkaConnection kafka, JobSpec spec) {
    long[] used = {0};
    Map<String, Long> rejects = new TreeMap<>();
    readAll(
        kafka,
        spec.topics().ledger(),
        bytes -> {
          LedgerEntry e = AvroCodec.decodeLedgerEntry(bytes);
          if (e.getOutcome() == LedgerOutcome.RELEASED) {
            used[0] += e.getContributions();
          }
        });
    readAll(
        kafka,
        spec.topics().rejects(),
        bytes ->
            rejects.merge(AvroCodec.decodeReject(bytes).getReason().toString(), 1L, Long::sum));
    return new Tally(used[0], rejects);
  }

  /** Every committed record of {@code topic} from its beginning to its end at the time of call. */
  private static void readAll(KafkaConnection kafka, String topic, Consumer<byte[]> each) {
    Properties p = kafka.clientProperties();
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
      if (infos == null || infos.isEmpty()) {
        return;
      }
      List<TopicPartition> parts = new ArrayList<>();
      infos.forEach(i -> parts.add(new TopicPartition(topic, i.partition())));
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      Map<TopicPartition, Long> end = consumer.endOffsets(parts);
      long deadline = System.currentTimeMillis() + 30_000;
      while (parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))
          && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          each.accept(r.value());
        }
      }
    }
  }
}
