package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.Tensor;
import dev.privagg.client.ClientUpdates;
import dev.privagg.io.AvroCodec;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Upgrading privagg under a running job keeps the open round and the budget. Each release's fixture
 * under {@code src/test/resources/upgrade/<release>} holds a savepoint of that release's job, taken
 * by stop-with-savepoint while a round was open (members summed in the shards, an adaptive C,
 * Adam's moments in the combiner, the publisher's position), together with its broker's data
 * directory and what that release did next. This build restores the savepoint on the same broker
 * data and must continue exactly as the recording release did: the open round releases the same
 * model bytes, the ledger's epsilon continues from the savepoint's, every round is charged once,
 * and the budget runs out at the same round.
 *
 * <p>To add a release's fixture, run {@link #recordFixture} with that release's code (see {@code
 * docs/operations.md}, "Upgrading privagg under a running job").
 */
class UpgradeIT {
  private static final Path FIXTURES = Path.of("src/test/resources/upgrade");
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final Duration PATIENCE = Duration.ofMinutes(3);

  /** The broker's data directory at the savepoint, as a tarball (600 mostly empty files). */
  private static final String KAFKA_DATA = "kafka-data.tar.gz";

  /** Ports of this test's own broker and session cluster. */
  private static LocalCluster cluster(Path state) {
    return new LocalCluster(state, 19692, 18681, 16723);
  }

  static Stream<String> releases() throws IOException {
    try (Stream<Path> dirs = Files.list(FIXTURES)) {
      return dirs
          .filter(Files::isDirectory)
          .map(p -> p.getFileName().toString())
          .sorted()
          .toList()
          .stream();
    }
  }

  @ParameterizedTest(name = "savepoint of {0}")
  @MethodSource("releases")
  void savepointOfAnEarlierRelease_restoresAndContinuesAsThatReleaseDid(
      String release, @TempDir Path state) throws Exception {
    Path fixture = FIXTURES.resolve(release);
    Continuation expected =
        JSON.readValue(fixture.resolve("continuation.json").toFile(), Continuation.class);
    Continuation actual = continueFrom(fixture, state);

    assertThat(actual.ledger())
        .as("ledger after restoring %s's savepoint", release)
        .containsExactlyElementsOf(expected.ledger());
    assertThat(actual.models())
        .as("models after restoring %s's savepoint", release)
        .containsExactlyElementsOf(expected.models());
    // The same rounds as the recording release, each charged once, epsilon never reset.
    List<Long> charged = actual.ledger().stream().map(Charge::round).toList();
    assertThat(charged).doesNotHaveDuplicates().isSorted();
    List<Double> spent = actual.ledger().stream().map(Charge::epsilonSpent).toList();
    assertThat(spent).isSorted();
    assertThat(actual.ledger().get(actual.ledger().size() - 1).outcome())
        .isEqualTo(LedgerOutcome.BUDGET_EXHAUSTED.name());
  }

  /**
   * Records a fixture with this build's code into {@code src/test/resources/upgrade/<release>}: two
   * released rounds, a third open with members at a stop-with-savepoint, then the continuation of
   * this same code restored from it.
   */
  @Test
  @EnabledIfSystemProperty(named = "privagg.recordUpgradeFixture", matches = ".+")
  void recordFixture(@TempDir Path state) throws Exception {
    String release = System.getProperty("privagg.recordUpgradeFixture");
    Path fixture = FIXTURES.resolve(release);
    assertThat(fixture).as("an existing fixture is never overwritten").doesNotExist();
    Path staging = state.resolve("fixture");
    Files.createDirectories(staging);
    Path specFile = staging.resolve("job.yaml");
    Files.writeString(specFile, specYaml(release));
    JobSpec spec = JobSpecReader.read(specFile);

    Path recording = state.resolve("recording");
    long openRoundDeadline;
    try (LocalCluster cluster = cluster(recording);
        KafkaProducer<byte[], byte[]> producer = FaultScenarios.producer(cluster.kafka())) {
      cluster.start();
      String flinkJob = cluster.submit(List.of(specFile), 1000, null);
      try (PublicTopicReader rounds =
              PublicTopicReader.rounds(cluster.kafka(), spec.topics().rounds(), "read_committed");
          PublicTopicReader models =
              PublicTopicReader.models(cluster.kafka(), spec.topics().models(), "read_committed")) {
        for (long round = 1; round <= 2; round++) {
          awaitAnnounced(rounds, spec, round);
          send(producer, spec, round, CLIENTS);
          long released = round;
          models.until(l -> models.has(spec.jobId(), released), PATIENCE, "model " + round);
        }
        openRoundDeadline = awaitAnnounced(rounds, spec, 3);
        send(producer, spec, 3, CLIENTS - 1);
      }
      // The decider has read round 3's members by now; any it has not is re-read from the
      // savepoint's offsets, with the same broker time, so round 3's members are the same.
      Thread.sleep(3000);
      assertThat(System.currentTimeMillis())
          .as("round 3 still open at the savepoint")
          .isLessThan(openRoundDeadline);
      Path savepoint = Path.of(java.net.URI.create(cluster.savepoint(flinkJob, true)));
      copyTree(savepoint, staging.resolve("savepoint"));
    }
    tar("-czf", staging.resolve(KAFKA_DATA), "-C", recording.resolve("kafka/data"), ".");
    // Every round the budget allows closes before the restore: the continuation is the same
    // however long after the recording a test restores.
    long restoreNotBefore = openRoundDeadline + ROUNDS_AFTER_THE_SAVEPOINT * TIMEOUT_MILLIS;
    Files.writeString(staging.resolve("restore-not-before"), Long.toString(restoreNotBefore));

    Continuation continuation = continueFrom(staging, state.resolve("continuation"));
    JSON.writeValue(staging.resolve("continuation.json").toFile(), continuation);
    copyTree(staging, fixture);
  }

  /** What a release did after the restore: the whole ledger, and a digest of each model. */
  record Continuation(List<Charge> ledger, List<Released> models) {}

  record Charge(
      long round,
      String outcome,
      double epsilonSpent,
      long contributions,
      Double clipNorm,
      Double nextClipNorm) {
    static Charge of(LedgerEntry e) {
      return new Charge(
          e.getRound(),
          e.getOutcome().name(),
          e.getEpsilonSpent(),
          e.getContributions(),
          e.getClipNorm(),
          e.getNextClipNorm());
    }
  }

  record Released(long round, double epsilon, double clipNorm, String tensorsSha256) {
    static Released of(GlobalModel m) throws Exception {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (Tensor t : m.getTensors()) {
        ByteBuffer data = t.getData().duplicate();
        sha.update(data);
      }
      return new Released(
          m.getRound(),
          m.getPrivacy().getEpsilon(),
          m.getPrivacy().getClipNorm(),
          HexFormat.of().formatHex(sha.digest()));
    }
  }

  private static final int CLIENTS = 6;
  private static final long TIMEOUT_MILLIS = 15_000;

  /** Budget for about eight rounds: three before the savepoint, the rest after it. */
  private static final long ROUNDS_AFTER_THE_SAVEPOINT = 12;

  private static String specYaml(String release) {
    String prefix = "upgrade-" + release.replace('.', '-');
    return """
        # privagg %s's job in the upgrade fixture: adaptive clipping and Adam, so the savepoint
        # holds a moved C and optimizer moments; seeded noise, so what it releases is repeatable.
        jobId: %s
        model:
          tensors:
            - {name: w, shape: [16]}
        rounds:
          timeout: %dms
          startGrace: 10s
          expectedClients: %d
        privacy:
          clipNorm: 1.0
          clipping: flat
          adaptiveClipping: {targetQuantile: 0.5, learningRate: 0.2, countNoiseStd: 1.0}
          noiseMultiplier: 2.0
          delta: 1.0e-5
          budgetEpsilon: 8.0
          noise: {source: seeded, seed: 20261125}
        server:
          optimizer: adam
          learningRate: 0.05
        topics: {updates: %s.updates, models: %s.models, rounds: %s.rounds, ledger: %s.ledger, rejects: %s.rejects}
        """
        .formatted(
            release, prefix, TIMEOUT_MILLIS, CLIENTS, prefix, prefix, prefix, prefix, prefix);
  }

  /**
   * Starts a session cluster on a copy of the fixture's broker data, submits this build's job from
   * the fixture's savepoint, and reads the ledger until the budget runs out.
   */
  private static Continuation continueFrom(Path fixture, Path state) throws Exception {
    Path data = state.resolve("kafka/data");
    Files.createDirectories(data);
    tar("-xzf", fixture.resolve(KAFKA_DATA).toAbsolutePath(), "-C", data);
    Path savepoint = state.resolve("savepoint");
    copyTree(fixture.resolve("savepoint"), savepoint);
    Path specFile = fixture.resolve("job.yaml").toAbsolutePath();
    JobSpec spec = JobSpecReader.read(specFile);
    long notBefore = Long.parseLong(Files.readString(fixture.resolve("restore-not-before")).trim());
    long wait = notBefore - System.currentTimeMillis();
    if (wait > 0) {
      Thread.sleep(wait);
    }
    try (LocalCluster cluster = cluster(state)) {
      cluster.start();
      cluster.submit(List.of(specFile), 1000, savepoint.toUri().toString());
      try (PublicTopicReader ledger =
              PublicTopicReader.ledger(cluster.kafka(), spec.topics().ledger(), "read_committed");
          PublicTopicReader models =
              PublicTopicReader.models(cluster.kafka(), spec.topics().models(), "read_committed")) {
        List<PublicTopicReader.Copy> entries =
            ledger.until(
                l ->
                    l.stream()
                        .map(c -> AvroCodec.decodeLedgerEntry(c.value()))
                        .anyMatch(e -> e.getOutcome() == LedgerOutcome.BUDGET_EXHAUSTED),
                PATIENCE,
                "the budget to run out; see " + cluster.logs());
        List<Charge> charges = new ArrayList<>();
        for (PublicTopicReader.Copy c : entries) {
          charges.add(Charge.of(AvroCodec.decodeLedgerEntry(c.value())));
        }
        // The publisher copies each release to the models topic after the ledger has it.
        long lastReleased =
            charges.stream()
                .filter(c -> c.outcome().equals(LedgerOutcome.RELEASED.name()))
                .mapToLong(Charge::round)
                .max()
                .orElse(0);
        models.until(
            l -> models.has(spec.jobId(), lastReleased),
            PATIENCE,
            "the model of round " + lastReleased + "; see " + cluster.logs());
        List<Released> released = new ArrayList<>();
        for (PublicTopicReader.Copy c : models.toEnd(Duration.ofSeconds(5))) {
          released.add(Released.of(AvroCodec.decodeModel(c.value())));
        }
        return new Continuation(charges, released);
      }
    }
  }

  private static long awaitAnnounced(PublicTopicReader rounds, JobSpec spec, long round) {
    List<PublicTopicReader.Copy> seen =
        rounds.until(
            l -> rounds.has(spec.jobId(), round), PATIENCE, "announcement of round " + round);
    return seen.stream()
        .map(c -> AvroCodec.decodeAnnouncement(c.value()))
        .filter(a -> a.getRound() == round)
        .findFirst()
        .orElseThrow()
        .getDeadlineMillis();
  }

  /** Clients 0 .. count-1's updates for {@code round}: fixed values, odd clients' clipped. */
  private static void send(
      KafkaProducer<byte[], byte[]> producer, JobSpec spec, long round, int count) {
    for (int c = 0; c < count; c++) {
      byte[] update =
          ClientUpdates.encode(
              spec,
              round,
              FaultScenarios.clientId(c),
              new float[][] {FaultScenarios.values(round, c)});
      producer.send(new ProducerRecord<>(spec.topics().updates(), update));
    }
    producer.flush();
  }

  private static void tar(Object... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("tar"));
    for (Object a : args) {
      command.add(a.toString());
    }
    Process tar = new ProcessBuilder(command).inheritIO().start();
    assertThat(tar.waitFor()).as(String.join(" ", command)).isZero();
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path p : paths.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }
}
