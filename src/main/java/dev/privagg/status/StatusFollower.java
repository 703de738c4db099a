package dev.privagg.status;

import dev.privagg.io.AvroCodec;
import dev.privagg.io.KafkaConnection;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads a job's ledger, rounds and rejects topics from the beginning, read_committed (what the job
 * committed, never an aborted copy), into a {@link StatusTracker}, then follows them. It commits no
 * offsets and joins no group: any number of operators can watch one job.
 */
public final class StatusFollower implements AutoCloseable {
  private final JobSpec spec;
  private final StatusTracker tracker;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Map<TopicPartition, Long> endAtStart;
  private final List<TopicPartition> partitions = new ArrayList<>();

  /**
   * @throws IllegalStateException when a topic does not exist or is not readable within {@code
   *     timeout}
   */
  public StatusFollower(KafkaConnection kafka, JobSpec spec, Duration timeout) {
    this.spec = spec;
    this.tracker = new StatusTracker(spec);
    Properties props = kafka.clientProperties();
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "privagg-status-" + UUID.randomUUID());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 64 << 20);
    // A mistyped spec or a job not started yet must not create its topics with broker defaults.
    props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    try {
      JobSpec.Topics t = spec.topics();
      for (String topic : List.of(t.ledger(), t.rounds(), t.rejects())) {
        var infos = consumer.partitionsFor(topic, timeout);
        if (infos == null || infos.isEmpty()) {
          throw new IllegalStateException(
              "topic "
                  + topic
                  + " of job "
                  + spec.jobId()
                  + " does not exist on "
                  + kafka.bootstrapServers()
                  + "; fix: check --bootstrap-servers and the spec's topics, or start the job"
                  + " (it creates them)");
        }
        infos.forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      endAtStart = consumer.endOffsets(partitions, timeout);
      countLatestRejectsOnly(t.rejects(), timeout);
    } catch (RuntimeException e) {
      consumer.close();
      throw e;
    }
  }

  /**
   * Clients decide how much the rejects topic holds: only its latest {@link #REJECTS_COUNTED}
   * records per partition are counted, so that a flood cannot stop an operator from reading the
   * ledger.
   */
  private void countLatestRejectsOnly(String topic, Duration timeout) {
    List<TopicPartition> rejects =
        partitions.stream().filter(p -> p.topic().equals(topic)).toList();
    Map<TopicPartition, Long> begin = consumer.beginningOffsets(rejects, timeout);
    for (TopicPartition p : rejects) {
      long from = endAtStart.get(p) - REJECTS_COUNTED;
      if (from > begin.get(p)) {
        consumer.seek(p, from);
        tracker.rejectsFromLatestOnly(REJECTS_COUNTED);
      }
    }
  }

  /** Rejects counted per partition of the rejects topic, the latest ones. */
  public static final long REJECTS_COUNTED = 100_000;

  /** Makes a {@link #poll} waiting in another thread return at once (to stop it). */
  public void wakeup() {
    consumer.wakeup();
  }

  public StatusTracker tracker() {
    return tracker;
  }

  /** True once every record committed before this follower started has been read. */
  public boolean caughtUp() {
    for (TopicPartition p : partitions) {
      if (consumer.position(p) < endAtStart.get(p)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Reads what arrived within {@code wait} into the tracker; each new ledger entry of the job also
   * goes to {@code onRound}. A record that does not decode is skipped: the topics are the job's
   * own, and a status view must not stop on one bad record.
   */
  public void poll(Duration wait, Consumer<RoundRecord> onRound) {
    ConsumerRecords<byte[], byte[]> records;
    try {
      records = consumer.poll(wait);
    } catch (WakeupException e) {
      return; // woken to stop
    }
    for (ConsumerRecord<byte[], byte[]> r : records) {
      try {
        read(r, onRound);
      } catch (RuntimeException e) {
        // Undecodable: skipped, see above.
      }
    }
  }

  /** Reads until caught up with what was committed at the start, or {@code timeout} passes. */
  public boolean catchUp(Duration timeout, Consumer<RoundRecord> onRound) {
    long end = System.nanoTime() + timeout.toNanos();
    while (!caughtUp()) {
      if (System.nanoTime() > end) {
        return false;
      }
      poll(Duration.ofMillis(200), onRound);
    }
    return true;
  }

  private void read(ConsumerRecord<byte[], byte[]> r, Consumer<RoundRecord> onRound) {
    JobSpec.Topics t = spec.topics();
    if (r.topic().equals(t.ledger())) {
      RoundRecord round = tracker.ledger(AvroCodec.decodeLedgerEntry(r.value()), r.timestamp());
      if (round != null) {
        onRound.accept(round);
      }
    } else if (r.topic().equals(t.rounds())) {
      tracker.announcement(AvroCodec.decodeAnnouncement(r.value()));
    } else {
      tracker.reject(AvroCodec.decodeReject(r.value()));
    }
  }

  @Override
  public void close() {
    consumer.close(Duration.ofSeconds(5));
  }
}
