package dev.privagg.bench;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.io.AvroCodec;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Follows a job's rounds and models topics as a client does ({@code read_committed}) and notes when
 * each announcement and model became visible, and each model's record timestamp (the time the job's
 * sink produced it, before the commit made it visible). It also reads the ledger and rejects
 * topics, so that a run can check that its rounds closed in order with exactly the updates sent for
 * them.
 */
final class TopicWatcher implements AutoCloseable {
  /** A model as seen: its producer timestamp and the moment it became visible here. */
  record SeenModel(long createMillis, long visibleNanos) {}

  private final Map<Long, Long> announcementsVisible = new ConcurrentHashMap<>();
  private final Map<Long, SeenModel> models = new ConcurrentHashMap<>();
  private final Map<Long, LedgerEntry> ledger = new ConcurrentHashMap<>();
  private final Map<String, Long> rejects = new ConcurrentHashMap<>();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile Exception failure;

  TopicWatcher(JobSpec spec, String bootstrapServers) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ConsumerConfig.GROUP_ID_CONFIG, "privagg-bench-" + UUID.randomUUID());
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 20);
    c.put(
        ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG,
        (int) Math.min(Integer.MAX_VALUE, spec.maxModelRecordBytes()));
    KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    String roundsTopic = spec.topics().rounds();
    String ledgerTopic = spec.topics().ledger();
    String rejectsTopic = spec.topics().rejects();
    consumer.subscribe(List.of(roundsTopic, spec.topics().models(), ledgerTopic, rejectsTopic));
    thread =
        new Thread(
            () -> {
              try (consumer) {
                while (running) {
                  for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50))) {
                    long now = System.nanoTime();
                    if (r.topic().equals(roundsTopic)) {
                      announcementsVisible.putIfAbsent(
                          AvroCodec.decodeAnnouncement(r.value()).getRound(), now);
                    } else if (r.topic().equals(ledgerTopic)) {
                      LedgerEntry entry = AvroCodec.decodeLedgerEntry(r.value());
                      ledger.putIfAbsent(entry.getRound(), entry);
                    } else if (r.topic().equals(rejectsTopic)) {
                      rejects.merge(
                          String.valueOf(AvroCodec.decodeReject(r.value()).getReason()),
                          1L,
                          Long::sum);
                    } else {
                      models.putIfAbsent(
                          AvroCodec.decodeModel(r.value()).getRound(),
                          new SeenModel(r.timestamp(), now));
                    }
                  }
                }
              } catch (Exception e) {
                failure = e;
              }
            },
            "bench-topic-watcher");
    thread.setDaemon(true);
    thread.start();
  }

  /** Waits until round {@code round} is announced. */
  void awaitAnnouncement(long round, JobProcess job) throws InterruptedException {
    while (!announcementsVisible.containsKey(round)) {
      pause(job);
    }
  }

  /** Waits until the model of {@code round} is visible and returns what was seen. */
  SeenModel awaitModel(long round, JobProcess job) throws InterruptedException {
    SeenModel seen;
    while ((seen = models.get(round)) == null) {
      pause(job);
    }
    return seen;
  }

  /**
   * Fails unless rounds {@code first} to {@code last} each released exactly {@code clients} updates
   * and no update was rejected: with several partitions, an update of round r + 1 stamped before
   * round r closed would be a FUTURE_ROUND reject, and r would wait for another client.
   */
  void checkRounds(long first, long last, int clients, JobProcess job) throws InterruptedException {
    // The ledger entry commits with the release, before the publisher copies the model out.
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!ledger.keySet().containsAll(rounds(first, last)) && System.nanoTime() < deadline) {
      pause(job);
    }
    if (!rejects.isEmpty()) {
      throw new IllegalStateException("the job rejected benchmark updates: " + rejects);
    }
    for (long round = first; round <= last; round++) {
      LedgerEntry entry = ledger.get(round);
      if (entry == null) {
        throw new IllegalStateException("no ledger entry for round " + round + " in 30 s");
      }
      if (entry.getOutcome() != LedgerOutcome.RELEASED || entry.getContributions() != clients) {
        throw new IllegalStateException(
            "round "
                + round
                + " must be RELEASED with "
                + clients
                + " contributions, was "
                + entry.getOutcome()
                + " with "
                + entry.getContributions());
      }
    }
  }

  private static List<Long> rounds(long first, long last) {
    return java.util.stream.LongStream.rangeClosed(first, last).boxed().toList();
  }

  private void pause(JobProcess job) throws InterruptedException {
    if (failure != null) {
      throw new IllegalStateException("reading the job's output failed: " + failure, failure);
    }
    job.checkAlive();
    Thread.sleep(1);
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.join(10_000);
  }
}
