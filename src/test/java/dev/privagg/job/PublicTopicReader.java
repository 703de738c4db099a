package dev.privagg.job;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.io.AvroCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads one topic from its beginning and keeps every record it has seen. With {@code
 * read_uncommitted} on a public topic it is the reader the threat model (docs/design.md) allows: it
 * sees aborted transactional copies too, keeps them all and compares them per (job, round).
 */
final class PublicTopicReader implements AutoCloseable {
  /** One record as read: where it was and its value. */
  record Copy(int partition, long offset, byte[] value) {}

  /** A training round on a public topic. */
  record RoundKey(String jobId, long round) {}

  private final String topic;
  private final Function<byte[], RoundKey> roundOf;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final List<Copy> seen = new ArrayList<>();

  private PublicTopicReader(
      String bootstrap, String topic, String isolation, Function<byte[], RoundKey> roundOf) {
    this.topic = topic;
    this.roundOf = roundOf;
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "fault-reader-" + UUID.randomUUID());
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
    // The job creates its topics with checked settings; a reader must not create them first.
    props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    consumer.subscribe(List.of(topic));
  }

  static PublicTopicReader models(String bootstrap, String topic, String isolation) {
    return new PublicTopicReader(
        bootstrap,
        topic,
        isolation,
        b -> {
          GlobalModel m = AvroCodec.decodeModel(b);
          return new RoundKey(m.getJobId(), m.getRound());
        });
  }

  static PublicTopicReader rounds(String bootstrap, String topic, String isolation) {
    return new PublicTopicReader(
        bootstrap,
        topic,
        isolation,
        b -> {
          RoundAnnouncement a = AvroCodec.decodeAnnouncement(b);
          return new RoundKey(a.getJobId(), a.getRound());
        });
  }

  /** The job's secure-aggregation messages (the secure topic), read the same way. */
  static PublicTopicReader secure(String bootstrap, String topic, String isolation) {
    return new PublicTopicReader(
        bootstrap,
        topic,
        isolation,
        b -> {
          dev.privagg.avro.SecureRound m = AvroCodec.decodeSecureRound(b);
          return new RoundKey(m.getJobId(), m.getRound());
        });
  }

  /** The operator-internal ledger, read the same way (to check it against the public topics). */
  static PublicTopicReader ledger(String bootstrap, String topic, String isolation) {
    return new PublicTopicReader(
        bootstrap,
        topic,
        isolation,
        b -> {
          LedgerEntry e = AvroCodec.decodeLedgerEntry(b);
          return new RoundKey(e.getJobId(), e.getRound());
        });
  }

  String topic() {
    return topic;
  }

  /** Polls until {@code done} holds for everything read so far. */
  List<Copy> until(Predicate<List<Copy>> done, Duration timeout, String what) {
    long end = System.currentTimeMillis() + timeout.toMillis();
    while (!done.test(seen)) {
      if (System.currentTimeMillis() > end) {
        throw new AssertionError(
            "timed out after "
                + timeout
                + " waiting for "
                + what
                + " on "
                + topic
                + " ("
                + seen.size()
                + " records read)");
      }
      pollOnce(Duration.ofMillis(100));
    }
    return List.copyOf(seen);
  }

  /**
   * Reads up to the topic's current end for this isolation level (the high watermark when
   * uncommitted, the last stable offset when committed) and returns every record read.
   */
  List<Copy> toEnd(Duration timeout) {
    long end = System.currentTimeMillis() + timeout.toMillis();
    while (true) {
      pollOnce(Duration.ofMillis(100));
      Set<TopicPartition> assigned = consumer.assignment();
      if (!assigned.isEmpty()) {
        Map<TopicPartition, Long> ends = consumer.endOffsets(assigned);
        if (ends.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
          return List.copyOf(seen);
        }
      }
      if (System.currentTimeMillis() > end) {
        throw new AssertionError("could not read " + topic + " to its end within " + timeout);
      }
    }
  }

  /** Whether a record of (job, round) has been read. */
  boolean has(String jobId, long round) {
    RoundKey key = new RoundKey(jobId, round);
    return seen.stream().anyMatch(c -> roundOf.apply(c.value()).equals(key));
  }

  /** Every value read for {@code jobId}, grouped by round in order of first appearance. */
  Map<Long, List<byte[]>> copiesByRound(String jobId) {
    Map<Long, List<byte[]>> out = new LinkedHashMap<>();
    for (Copy c : seen) {
      RoundKey key = roundOf.apply(c.value());
      if (key.jobId().equals(jobId)) {
        out.computeIfAbsent(key.round(), r -> new ArrayList<>()).add(c.value());
      }
    }
    return out;
  }

  /**
   * The rounds of {@code jobId} for which this reader saw more than one distinct value, each as a
   * line naming the round, how many copies and distinct payloads, and the payloads decoded by
   * {@code describe}. Identical copies of one payload are allowed (design.md invariant 9).
   */
  List<String> roundsWithTwoPayloads(String jobId, Function<byte[], String> describe) {
    List<String> out = new ArrayList<>();
    copiesByRound(jobId)
        .forEach(
            (round, copies) -> {
              List<byte[]> distinct = distinct(copies);
              if (distinct.size() > 1) {
                out.add(
                    "%s round %d on %s: %d copies, %d different payloads: %s"
                        .formatted(
                            jobId,
                            round,
                            topic,
                            copies.size(),
                            distinct.size(),
                            distinct.stream().map(describe).collect(Collectors.joining(" | "))));
              }
            });
    return out;
  }

  static List<byte[]> distinct(List<byte[]> copies) {
    List<byte[]> out = new ArrayList<>();
    for (byte[] c : copies) {
      if (out.stream().noneMatch(d -> Arrays.equals(d, c))) {
        out.add(c);
      }
    }
    return out;
  }

  private void pollOnce(Duration timeout) {
    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(timeout)) {
      seen.add(new Copy(r.partition(), r.offset(), r.value()));
    }
  }

  @Override
  public void close() {
    consumer.close();
  }
}
