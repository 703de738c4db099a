package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.cli.CliTestAccess;
import dev.privagg.client.ClientUpdates;
import dev.privagg.io.AvroCodec;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Real failures on a real cluster: the job runs on a Flink session cluster (JobManager and
 * TaskManager JVMs from deploy/local) against a real broker JVM; the TaskManager is killed with
 * SIGKILL mid-round and again right after a release, before the checkpoint that would commit it.
 * Every release must be bit-identical to a reference run without failures (same key, job id and
 * inputs, on the MiniCluster), each round must be in the read_committed model topic exactly once,
 * even the aborted release must equal the committed one, and the ledger must match the accountant.
 */
class FaultInjectionIT extends KafkaFlinkTestBase {
  private static final Path STATE = Path.of("target/fault-injection").toAbsolutePath();
  private static final String CLUSTER_KAFKA = "localhost:19092";
  private static final String REST = "http://localhost:18081";
  private static final int ROUNDS = 4;
  private static final int CLIENTS = 6;

  @Test
  void killedTaskManagers_neverLeaveTwoDifferentReleasesOfARound() throws Exception {
    Files.createDirectories(STATE);
    Path key = STATE.resolve("noise.key");
    // As `openssl rand -hex 32 > noise.key` writes it: 64 hex digits and a newline.
    Files.writeString(key, "6661756c742d696e6a656374696f6e2d746573742d6e6f6973652d6b65792d31\n");
    String jobId = "fault-" + UUID.randomUUID().toString().substring(0, 8);

    // Reference: no failures, short rounds (deadlines never enter a release), own topics.
    JobSpec reference =
        JobSpecReader.parse("reference", yaml(jobId, "ref-" + jobId, "2s", "1s", key));
    startJob(reference, 1);
    Map<Long, byte[]> expected = new HashMap<>();
    Map<Long, Long> expectedContributions = new HashMap<>();
    for (long r = 1; r <= ROUNDS; r++) {
      awaitRound(reference, r);
      produce(reference.topics().updates(), null, inputs(reference, r));
      expected.put(r, modelBytes(awaitModel(reference, r)));
    }
    final long roundCount = ROUNDS;
    for (LedgerEntry e :
        ledgerUntil(reference, l -> l.size() >= roundCount, Duration.ofSeconds(30))) {
      expectedContributions.put(e.getRound(), e.getContributions());
    }
    stopJobs();

    Path specFile = STATE.resolve(jobId + ".yaml");
    Files.writeString(specFile, yaml(jobId, "fault-" + jobId, "20s", "10s", key));
    JobSpec spec = JobSpecReader.read(specFile);
    local("start");
    try (KafkaProducer<byte[], byte[]> producer = producer();
        Topic committedModels = new Topic(spec.topics().models(), "read_committed");
        Topic uncommittedModels = new Topic(spec.topics().models(), "read_uncommitted");
        Topic announcements = new Topic(spec.topics().rounds(), "read_committed")) {
      CliTestAccess.run(
          "submit",
          "--spec",
          specFile.toString(),
          "--bootstrap-servers",
          CLUSTER_KAFKA,
          "--rest",
          REST,
          "--jar",
          Path.of("target/privagg-job.jar").toAbsolutePath().toString(),
          "--checkpoint-interval-ms",
          "8000");
      byte[] abortedCandidate = null;
      for (long r = 1; r <= ROUNDS; r++) {
        final long round = r;
        announcements.until(
            l -> l.stream().anyMatch(b -> AvroCodec.decodeAnnouncement(b).getRound() == round),
            Duration.ofSeconds(180));
        for (byte[] update : inputs(spec, r)) {
          producer.send(new ProducerRecord<>(spec.topics().updates(), update));
        }
        producer.flush();
        if (r == 2) {
          Thread.sleep(2000);
          killTaskManager(); // mid-round: the updates are in Kafka, the round is open
        }
        if (r == 3) {
          // Right after the release is written, before the checkpoint that commits it.
          List<byte[]> seen =
              uncommittedModels.until(
                  l -> l.stream().anyMatch(b -> AvroCodec.decodeModel(b).getRound() == round),
                  Duration.ofSeconds(120));
          killTaskManager();
          abortedCandidate =
              modelBytes(
                  seen.stream()
                      .map(AvroCodec::decodeModel)
                      .filter(m -> m.getRound() == round)
                      .findFirst()
                      .orElseThrow());
        }
        committedModels.until(
            l -> l.stream().anyMatch(b -> AvroCodec.decodeModel(b).getRound() == round),
            Duration.ofSeconds(180));
      }

      List<GlobalModel> committed =
          committedModels.all().stream()
              .map(AvroCodec::decodeModel)
              .filter(m -> m.getJobId().equals(jobId))
              .toList();
      assertThat(committed)
          .extracting(GlobalModel::getRound)
          .containsExactly(0L, 1L, 2L, 3L, 4L); // each once, in order
      for (GlobalModel m : committed) {
        if (m.getRound() > 0) {
          assertThat(modelBytes(m))
              .as("round %d", m.getRound())
              .isEqualTo(expected.get(m.getRound()));
        }
      }
      // Whatever a read_uncommitted reader saw, aborted or not, is the same release.
      uncommittedModels.until(
          l -> l.stream().filter(b -> AvroCodec.decodeModel(b).getRound() == ROUNDS).count() >= 1,
          Duration.ofSeconds(60));
      for (byte[] raw : uncommittedModels.all()) {
        GlobalModel m = AvroCodec.decodeModel(raw);
        if (m.getRound() > 0) {
          assertThat(modelBytes(m))
              .as("uncommitted round %d", m.getRound())
              .isEqualTo(expected.get(m.getRound()));
        }
      }
      assertThat(abortedCandidate).isEqualTo(expected.get(3L));
      long roundThreeWrites =
          uncommittedModels.all().stream()
              .filter(b -> AvroCodec.decodeModel(b).getRound() == 3)
              .count();
      // 2 when the kill beat the checkpoint (an aborted and a committed copy), 1 when it did not.
      System.out.println(
          "fault injection: round 3 was written " + roundThreeWrites + " time(s), all identical");

      try (Topic ledgerTopic = new Topic(spec.topics().ledger(), "read_committed")) {
        List<LedgerEntry> ledger =
            ledgerTopic.until(l -> l.size() >= ROUNDS, Duration.ofSeconds(30)).stream()
                .map(AvroCodec::decodeLedgerEntry)
                .filter(e -> e.getOutcome() == LedgerOutcome.RELEASED)
                .toList();
        assertThat(ledger)
            .extracting(LedgerEntry::getRound)
            .startsWith(1L, 2L, 3L, 4L)
            .doesNotHaveDuplicates();
        PrivacyEvent round = spec.roundCharge().event(1.0, 1);
        for (LedgerEntry e : ledger.subList(0, ROUNDS)) {
          assertThat(e.getEpsilonSpent())
              .isEqualTo(
                  Accountant.named("rdp")
                      .epsilon(PrivacyLedger.of(round.times(e.getRound())), 1e-5)
                      .epsilon());
          assertThat(e.getContributions())
              .as("round %d contributions", e.getRound())
              .isEqualTo(expectedContributions.get(e.getRound()));
        }
      }
    } finally {
      local("stop");
    }
  }

  private static String yaml(
      String jobId, String topicPrefix, String timeout, String grace, Path key) {
    return """
        jobId: %s
        model:
          tensors:
            - {name: w, shape: [16]}
        rounds:
          timeout: %s
          startGrace: %s
          expectedClients: 3
        privacy:
          clipNorm: 1.0
          noiseMultiplier: 1.0
          delta: 1.0e-5
          budgetEpsilon: 1000
          sampling: {mode: server-poisson, rate: 0.5}
          noise: {source: keyed, keyFile: %s}
        topics: {updates: %s.updates, models: %s.models, rounds: %s.rounds, ledger: %s.ledger, rejects: %s.rejects}
        """
        .formatted(
            jobId,
            timeout,
            grace,
            key,
            topicPrefix,
            topicPrefix,
            topicPrefix,
            topicPrefix,
            topicPrefix);
  }

  /** The same updates in both runs: client c's update in round r is a fixed function of (r, c). */
  private static byte[][] inputs(JobSpec spec, long round) {
    byte[][] out = new byte[CLIENTS][];
    for (int c = 0; c < CLIENTS; c++) {
      float[] w = new float[16];
      for (int i = 0; i < w.length; i++) {
        w[i] = (float) Math.sin(round * 31 + c * 7 + i) * (c % 2 == 0 ? 0.1f : 2f);
      }
      out[c] = ClientUpdates.encode(spec, round, "client-" + c, new float[][] {w});
    }
    return out;
  }

  private static byte[] modelBytes(GlobalModel model) {
    ByteBuffer data = model.getTensors().get(0).getData().duplicate();
    byte[] out = new byte[data.remaining()];
    data.get(out);
    return out;
  }

  private static void killTaskManager() throws Exception {
    long pid = Long.parseLong(Files.readString(STATE.resolve("flink/tm.pid")).trim());
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly); // SIGKILL
    Thread.sleep(1000);
    local("start", "taskmanager");
  }

  private static void local(String... args) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of("bash", Path.of("deploy/local/privagg-local").toAbsolutePath().toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(STATE.resolve("privagg-local.log").toFile()));
    pb.environment()
        .putAll(
            Map.of(
                "PRIVAGG_LOCAL_STATE",
                STATE.toString(),
                "KAFKA_PORT",
                "19092",
                "KAFKA_CONTROLLER_PORT",
                "19093",
                "FLINK_REST_PORT",
                "18081",
                "FLINK_RPC_PORT",
                "16123"));
    int code = pb.start().waitFor();
    if (code != 0) {
      throw new IllegalStateException(
          "privagg-local "
              + String.join(" ", args)
              + " exited "
              + code
              + "; see "
              + STATE.resolve("privagg-local.log"));
    }
  }

  private static KafkaProducer<byte[], byte[]> producer() {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, CLUSTER_KAFKA);
    return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /** Reads one topic of the cluster's broker from the beginning with an isolation level. */
  private static final class Topic implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<byte[]> seen = new ArrayList<>();

    Topic(String topic, String isolation) {
      Properties props = new Properties();
      props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, CLUSTER_KAFKA);
      props.put(ConsumerConfig.GROUP_ID_CONFIG, "fault-" + UUID.randomUUID());
      props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
      consumer =
          new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      consumer.subscribe(List.of(topic));
    }

    List<byte[]> until(Predicate<List<byte[]>> done, Duration timeout) {
      long end = System.currentTimeMillis() + timeout.toMillis();
      while (!done.test(seen)) {
        if (System.currentTimeMillis() > end) {
          throw new AssertionError(
              "timed out after " + seen.size() + " records; see " + STATE.resolve("flink/logs"));
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          seen.add(r.value());
        }
      }
      return List.copyOf(seen);
    }

    List<byte[]> all() {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofSeconds(2))) {
        seen.add(r.value());
      }
      return List.copyOf(seen);
    }

    @Override
    public void close() {
      consumer.close();
    }
  }
}
