package dev.privagg.job;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real KRaft broker (in-process, once per class) and a Flink MiniCluster with four slots (the
 * most any test runs at, ParallelismIT at parallelism 4: with fewer its job would wait for slots
 * forever), with helpers to run the job, produce updates and read the output topics as a client
 * would.
 */
abstract class KafkaFlinkTestBase {
  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .build());

  static dev.privagg.sim.EmbeddedKafka kafka;
  static String bootstrap;
  private final List<JobClient> jobs = new ArrayList<>();
  private final Map<String, KafkaConsumer<byte[], byte[]>> consumers = new ConcurrentHashMap<>();

  @BeforeAll
  static void startKafka() throws Exception {
    kafka = dev.privagg.sim.EmbeddedKafka.start();
    bootstrap = kafka.bootstrapServers();
  }

  @AfterAll
  static void stopKafka() throws Exception {
    if (kafka != null) {
      kafka.close();
    }
  }

  /**
   * Deletes the spec's topics (its job's whole history) and creates them anew, so a next run of the
   * same job id on the same topic names starts from nothing: a new deployment. The records read
   * from the old topics are forgotten too, so the next waits read the new ones.
   */
  void recreateTopics(JobSpec spec) throws Exception {
    consumers.values().forEach(KafkaConsumer::close);
    consumers.clear();
    // What was read from the deleted topics is gone with them: a wait must not be met by it.
    readCache.clear();
    java.util.Properties props = new java.util.Properties();
    props.put("bootstrap.servers", bootstrap);
    try (org.apache.kafka.clients.admin.Admin admin =
        org.apache.kafka.clients.admin.Admin.create(props)) {
      var existing = new java.util.ArrayList<>(spec.topics().all());
      existing.retainAll(admin.listTopics().names().get());
      admin.deleteTopics(existing).all().get();
      long deadline = System.currentTimeMillis() + 60_000;
      while (admin.listTopics().names().get().stream().anyMatch(spec.topics().all()::contains)) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("topics of " + spec.jobId() + " not deleted in 60 s");
        }
        Thread.sleep(200);
      }
    }
    for (int attempt = 0; ; attempt++) {
      try {
        KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2);
        return;
      } catch (Exception e) {
        if (attempt >= 50) {
          throw e;
        }
        Thread.sleep(200); // deleted topics may linger a moment in the controller
      }
    }
  }

  /** Cancels the running jobs (their output stays on the topics). */
  void stopJobs() throws Exception {
    for (JobClient job : jobs) {
      cancelIfRunning(job);
    }
    jobs.clear();
  }

  @AfterEach
  void cancelJobs() throws Exception {
    for (JobClient job : jobs) {
      cancelIfRunning(job);
    }
    jobs.clear();
    consumers.values().forEach(KafkaConsumer::close);
    consumers.clear();
  }

  private static void cancelIfRunning(JobClient job) throws Exception {
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      job.cancel().get();
    }
  }

  /** A spec whose job id and topics are unique to this test run. */
  static JobSpec spec(String yamlBody) {
    String id = "it-" + UUID.randomUUID().toString().substring(0, 8);
    String yaml =
        ("jobId: %s\n%s\ntopics:\n  updates: %s.updates\n  models: %s.models\n  rounds: %s.rounds\n"
                + "  ledger: %s.ledger\n  rejects: %s.rejects\n  secure: %s.secure\n")
            .formatted(id, yamlBody, id, id, id, id, id, id);
    return JobSpecReader.parse(id, yaml);
  }

  /** Another training job on the same topics as {@code sibling}, served by the same Flink job. */
  static JobSpec siblingSpec(JobSpec sibling, String jobId, String yamlBody) {
    JobSpec.Topics t = sibling.topics();
    String yaml =
        ("jobId: %s\n%s\ntopics:\n  updates: %s\n  models: %s\n  rounds: %s\n  ledger: %s\n"
                + "  rejects: %s\n  secure: %s\n")
            .formatted(
                jobId,
                yamlBody,
                t.updates(),
                t.models(),
                t.rounds(),
                t.ledger(),
                t.rejects(),
                t.secure());
    return JobSpecReader.parse(jobId, yaml);
  }

  /** Creates the topics and starts one Flink job serving {@code specs} on the MiniCluster. */
  JobClient startJob(List<JobSpec> specs, int parallelism) throws Exception {
    KafkaPreflight.ensureTopics(kafka.connection(), specs, 2);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    JobClient job =
        PrivaggJob.start(
            env,
            specs,
            new PrivaggJob.Settings(
                kafka.connection(), 300, parallelism, System.currentTimeMillis()));
    jobs.add(job);
    return job;
  }

  JobClient startJob(JobSpec spec, int parallelism) throws Exception {
    return startJob(List.of(spec), parallelism);
  }

  /**
   * Every record {@code topic} holds now, as a reader with read_uncommitted sees it: aborted
   * transactional copies included.
   */
  List<ConsumerRecord<byte[], byte[]>> readUncommitted(String topic) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
    props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 64 << 20);
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<org.apache.kafka.common.TopicPartition> partitions =
          c.partitionsFor(topic).stream()
              .map(p -> new org.apache.kafka.common.TopicPartition(topic, p.partition()))
              .toList();
      c.assign(partitions);
      c.seekToBeginning(partitions);
      Map<org.apache.kafka.common.TopicPartition, Long> end = c.endOffsets(partitions);
      while (partitions.stream().anyMatch(p -> c.position(p) < end.get(p))) {
        c.poll(Duration.ofMillis(200)).forEach(out::add);
      }
    }
    return out;
  }

  void produce(String topic, String key, byte[]... values) {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 64 << 20);
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (byte[] value : values) {
        producer.send(new ProducerRecord<>(topic, key == null ? null : key.getBytes(), value));
      }
      producer.flush();
    }
  }

  /** Polls a topic (read_committed, from the start) until {@code done} holds for what was read. */
  <T> List<T> readUntil(
      String topic, Function<byte[], T> decode, Predicate<List<T>> done, Duration timeout) {
    KafkaConsumer<byte[], byte[]> consumer =
        consumers.computeIfAbsent(
            topic,
            t -> {
              Properties props = new Properties();
              props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
              props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
              props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
              props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
              props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 64 << 20);
              KafkaConsumer<byte[], byte[]> c =
                  new KafkaConsumer<>(
                      props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
              c.subscribe(List.of(t));
              return c;
            });
    List<T> seen =
        readCache.computeIfAbsent(topic, t -> new ArrayList<>()).stream()
            .map(o -> (T) o)
            .collect(java.util.stream.Collectors.toCollection(ArrayList::new));
    long end = System.currentTimeMillis() + timeout.toMillis();
    while (!done.test(seen)) {
      if (System.currentTimeMillis() > end) {
        throw new AssertionError(
            "timed out reading " + topic + "; read " + seen.size() + " records: " + seen);
      }
      for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
        T value = decode.apply(record.value());
        seen.add(value);
        readCache.get(topic).add(value);
      }
    }
    return seen;
  }

  private final Map<String, List<Object>> readCache = new ConcurrentHashMap<>();

  /** Forgets what was read, for a test that deletes topics and creates them again. */
  void forgetReads() {
    consumers.values().forEach(KafkaConsumer::close);
    consumers.clear();
    readCache.clear();
  }

  List<GlobalModel> modelsUntil(JobSpec spec, Predicate<List<GlobalModel>> done, Duration timeout) {
    return readUntil(spec.topics().models(), AvroCodec::decodeModel, done, timeout);
  }

  List<RoundAnnouncement> announcementsUntil(
      JobSpec spec, Predicate<List<RoundAnnouncement>> done, Duration timeout) {
    return readUntil(spec.topics().rounds(), AvroCodec::decodeAnnouncement, done, timeout);
  }

  List<LedgerEntry> ledgerUntil(JobSpec spec, Predicate<List<LedgerEntry>> done, Duration timeout) {
    return readUntil(spec.topics().ledger(), AvroCodec::decodeLedgerEntry, done, timeout);
  }

  List<RejectedUpdate> rejectsUntil(
      JobSpec spec, Predicate<List<RejectedUpdate>> done, Duration timeout) {
    return readUntil(spec.topics().rejects(), AvroCodec::decodeReject, done, timeout);
  }

  /** Waits for round {@code round}'s announcement. */
  RoundAnnouncement awaitRound(JobSpec spec, long round) {
    List<RoundAnnouncement> all =
        announcementsUntil(
            spec, l -> l.stream().anyMatch(a -> a.getRound() == round), Duration.ofSeconds(60));
    return all.stream().filter(a -> a.getRound() == round).findFirst().orElseThrow();
  }

  /** Waits for the model of round {@code round}. */
  GlobalModel awaitModel(JobSpec spec, long round) {
    List<GlobalModel> all =
        modelsUntil(
            spec, l -> l.stream().anyMatch(m -> m.getRound() == round), Duration.ofSeconds(60));
    return all.stream().filter(m -> m.getRound() == round).findFirst().orElseThrow();
  }
}
