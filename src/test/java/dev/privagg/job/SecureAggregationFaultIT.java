package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.Opened;
import dev.privagg.avro.Roster;
import dev.privagg.avro.SecureRound;
import dev.privagg.avro.Survivors;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.KafkaConnection;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A TaskManager SIGKILLed in the middle of a secure round, on a real session cluster and broker
 * (deploy/local): right after the round's roster is committed, while its clients send their
 * encrypted shares. The restored job takes the round up from its last checkpoint, with the session
 * it drew before (or, restored to before the round opened, a new session the clients join afresh):
 * every client finishes, the round is released once with the exact sum of every client's update
 * (noise multiplier 0), each round's committed secure messages name one session, and a
 * read_uncommitted reader sees one payload per round on the public models topic.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecureAggregationFaultIT {
  private static final Path STATE = Path.of("target/secure-fault").toAbsolutePath();
  private static final int CLIENTS = 6;
  private static final double LEARNING_RATE = 1.0;
  private static final int M = 6;

  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private LocalCluster cluster;

  @BeforeAll
  void startCluster() throws Exception {
    Files.createDirectories(STATE);
    // Ports of its own, apart from FaultInjectionIT's and the default test ports.
    cluster = new LocalCluster(STATE, 19892, 18881, 16923);
    cluster.startInParallel();
  }

  @AfterAll
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void taskManagerKilledMidProtocol_roundIsReleasedOnceWithEveryClientsUpdate() throws Exception {
    String id = "secure-fault-" + run;
    // The share phase outlasts a TaskManager's recovery on a loaded 2-core machine (~20 s), so
    // the shares sent while the job is down still count.
    JobSpec spec =
        spec(
            id,
            "67s",
            "noiseMultiplier: 0",
            "phases: {advertise: 10s, share: 30s, confirm: 5s, maskedInput: 10s, consistency: 5s}");
    float[][][] updates = updates(0.1);
    double[] expected = new double[16];
    for (float[][] u : updates) {
      for (int i = 0; i < 16; i++) {
        expected[i] += LEARNING_RATE * u[0][i] / M;
      }
    }
    float[] w = killTaskManagerAfter(spec, updates, SecureAggregationFaultIT::isRosterOf);
    for (int i = 0; i < 16; i++) {
      assertThat((double) w[i]).as("coordinate %d", i).isCloseTo(expected[i], within(1e-6));
    }
  }

  /**
   * Distributed noise, the TaskManager killed once the survivors of the masked-input phase are
   * committed: the restored job holds the masked words' partial sums and the round's noise plan
   * from its checkpoint, takes the clients' consistency and unmasking messages, and releases the
   * mean of the clipped updates plus the six shares, decoded once.
   */
  @Test
  void taskManagerKilledAfterMaskedInputs_distributedNoiseRoundIsReleasedOnce() throws Exception {
    String id = "secure-fault-ddg-" + run;
    // The consistency phase outlasts a TaskManager's recovery, as the share phase above.
    JobSpec spec =
        spec(
            id,
            "110s",
            "mechanism: distributed-discrete-gaussian\n  noiseMultiplier: 0.001",
            "bitsPerCoordinate: 18\n  phases: {advertise: 10s, share: 20s,"
                + " confirm: 5s, maskedInput: 10s, consistency: 30s}");
    var plan = spec.distributedNoise();
    float[][][] updates = updates(0.5); // norm about 1.2: clipped to C = 1
    double[] expected = new double[16];
    for (float[][] u : updates) {
      double norm = 0;
      for (float v : u[0]) {
        norm += v * v;
      }
      double scale = Math.min(1, 1 / Math.sqrt(norm));
      for (int i = 0; i < 16; i++) {
        expected[i] += LEARNING_RATE * u[0][i] * scale / M;
      }
    }
    float[] w = killTaskManagerAfter(spec, updates, SecureAggregationFaultIT::isSurvivorsOf);
    // maxClients = 12 shares of sigma^2 units^2 (six the job's) and six roundings of at most
    // sqrt(16) units in norm, in model
    // units over m: 6 noise stds fail by chance with probability about 16 * 2e-9.
    double sigma =
        Math.sqrt(
            plan.maxInputs() * (double) plan.varianceNumerator() / plan.varianceDenominator());
    double tolerance = (6 * sigma + 6 * 4) / plan.unitsPerClipNorm() / M;
    assertThat(tolerance).as("the check is sharp next to the updates").isLessThan(0.01);
    for (int i = 0; i < 16; i++) {
      assertThat((double) w[i]).as("coordinate %d", i).isCloseTo(expected[i], within(tolerance));
    }
  }

  private JobSpec spec(String id, String timeout, String privacy, String aggregation)
      throws Exception {
    Path file = STATE.resolve(id + ".yaml");
    Files.writeString(
        file,
        """
        jobId: %s
        model:
          tensors:
            - {name: w, shape: [16]}
        rounds:
          timeout: %s
          startGrace: 6s
          expectedClients: %d
          maxClients: 12
          minimumCohort: {count: 5, noiseStd: 0.1}
        privacy:
          clipNorm: 1.0
          %s
          delta: 1.0e-5
          budgetEpsilon: .inf
        aggregation:
          mode: secure
          maxDropoutRate: 0.15
          adversarialClientRate: 0.1
          %s
        serverLearningRate: %s
        topics: {updates: %s.updates, models: %s.models, rounds: %s.rounds, ledger: %s.ledger,
          rejects: %s.rejects, secure: %s.secure}
        """
            .formatted(
                id, timeout, M, privacy, aggregation, LEARNING_RATE, id, id, id, id, id, id));
    return JobSpecReader.read(file);
  }

  private static float[][][] updates(double size) {
    float[][][] updates = new float[CLIENTS][][];
    for (int c = 0; c < CLIENTS; c++) {
      float[] w = new float[16];
      for (int i = 0; i < 16; i++) {
        w[i] = (float) (Math.sin(c * 7 + i) * size);
      }
      updates[c] = new float[][] {w};
    }
    return updates;
  }

  /**
   * Runs round 1 of {@code spec} on the cluster with every client, kills the TaskManager once a
   * committed secure message passes {@code killAt}, and checks what the restored job leaves: one
   * release with every client's contribution, one payload per round for a read_uncommitted reader,
   * one session. Returns the released model.
   */
  private float[] killTaskManagerAfter(
      JobSpec spec, float[][][] updates, java.util.function.BiPredicate<byte[], Long> killAt)
      throws Exception {
    String id = spec.jobId();
    String flinkJob = cluster.submit(List.of(STATE.resolve(id + ".yaml")), 2000, null);
    try {
      return releasedAfterKill(spec, updates, killAt);
    } finally {
      // A failed case leaves no job behind to take the next one's slots.
      cluster.cancel(flinkJob);
    }
  }

  private float[] releasedAfterKill(
      JobSpec spec, float[][][] updates, java.util.function.BiPredicate<byte[], Long> killAt)
      throws Exception {
    String id = spec.jobId();
    float[] w;
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    try (PrivaggClient client = new PrivaggClient(spec, KafkaConnection.to(cluster.kafka()));
        PublicTopicReader secure =
            PublicTopicReader.secure(cluster.kafka(), spec.topics().secure(), "read_committed");
        PublicTopicReader models =
            PublicTopicReader.models(cluster.kafka(), spec.topics().models(), "read_uncommitted")) {
      client.awaitRound(1, Duration.ofSeconds(120));
      List<Future<?>> done = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        int clientIndex = c;
        done.add(
            pool.submit(
                () -> {
                  client.send(1, "client-" + clientIndex, updates[clientIndex]);
                  return null;
                }));
      }
      secure.until(
          l -> l.stream().anyMatch(copy -> killAt.test(copy.value(), 1L)),
          Duration.ofSeconds(120),
          "round 1's kill point; see " + cluster.logs());
      cluster.killTaskManager();
      for (Future<?> f : done) {
        f.get();
      }

      GlobalModel model = client.awaitModel(1, Duration.ofSeconds(180));
      w = FaultScenarios.tensors(model);

      models.toEnd(Duration.ofSeconds(30));
      assertThat(models.roundsWithTwoPayloads(id, FaultScenarios::describeModel))
          .as("rounds with two different payloads on the public models topic")
          .isEmpty();
      secure.toEnd(Duration.ofSeconds(30));
      Map<Long, Set<String>> sessions = new HashMap<>();
      for (PublicTopicReader.Copy copy : secure.toEnd(Duration.ofSeconds(5))) {
        SecureRound m = AvroCodec.decodeSecureRound(copy.value());
        if (m.getBody() instanceof Opened) {
          byte[] session = new byte[16];
          m.getSession().duplicate().get(session);
          sessions
              .computeIfAbsent(m.getRound(), r -> new HashSet<>())
              .add(HexFormat.of().formatHex(session));
        }
      }
      assertThat(sessions.get(1L)).as("committed sessions of round 1").hasSize(1);
    } finally {
      pool.shutdownNow();
    }

    try (PublicTopicReader ledger =
        PublicTopicReader.ledger(cluster.kafka(), spec.topics().ledger(), "read_committed")) {
      List<LedgerEntry> entries =
          ledger.toEnd(Duration.ofSeconds(30)).stream()
              .map(copy -> AvroCodec.decodeLedgerEntry(copy.value()))
              .filter(e -> e.getRound() == 1 && e.getOutcome() == LedgerOutcome.RELEASED)
              .toList();
      assertThat(entries).as("committed releases of round 1").hasSize(1);
      assertThat(entries.get(0).getContributions()).isEqualTo(CLIENTS);
      assertThat(entries.get(0).getMechanismKind())
          .isEqualTo(
              spec.distributedNoise() == null ? "GAUSSIAN" : "DISTRIBUTED_DISCRETE_GAUSSIAN");
    }
    return w;
  }

  private static boolean isRosterOf(byte[] value, long round) {
    SecureRound m = AvroCodec.decodeSecureRound(value);
    return m.getRound() == round && m.getBody() instanceof Roster;
  }

  private static boolean isSurvivorsOf(byte[] value, long round) {
    SecureRound m = AvroCodec.decodeSecureRound(value);
    return m.getRound() == round && m.getBody() instanceof Survivors;
  }
}
