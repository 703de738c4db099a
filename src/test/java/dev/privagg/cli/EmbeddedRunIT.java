package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.client.ClientUpdates;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.AvroCodec;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code privagg run} without {@code --bootstrap-servers}, as a user runs it: a JVM of its own (the
 * classpath of {@code ./privagg}) with its embedded broker on a free port, stopped by SIGTERM (what
 * Ctrl-C does) and by SIGKILL, and started again on the same state directory. The broker's topics,
 * and with them the privacy ledger, must survive both: budget never resets.
 */
class EmbeddedRunIT {
  private static final double NOISE_MULTIPLIER = 2.0;
  private static final double DELTA = 1e-5;
  private static final String SPEC =
      """
      jobId: embedded-run
      model:
        tensors:
          - {name: w, shape: [3]}
      rounds: {timeout: 2s, startGrace: 1s, expectedClients: 2}
      privacy: {clipNorm: 1.0, noiseMultiplier: 2.0, delta: 1.0e-5, budgetEpsilon: 100}
      """;

  @TempDir Path dir;
  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void killLeftovers() throws Exception {
    for (Process p : started) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void withoutBootstrapServers_topicsAndLedgerSurviveCtrlCAndKill9_andEpsilonContinues()
      throws Exception {
    Path specFile = Files.writeString(dir.resolve("embedded-run.yaml"), SPEC);
    JobSpec spec = JobSpecReader.parse("embedded-run", SPEC);
    Path state = dir.resolve("state");
    int port = freePort();
    String kafka = "localhost:" + port;

    // First run: a new broker; two clients' updates make a model.
    Process first = startRun(specFile, port, state, "first");
    assertThat(output("first"))
        .contains("embedded Kafka broker at " + kafka + " (data in " + state.resolve("kafka") + ")")
        .contains("new broker (cluster id ")
        .contains("created topics: ");
    long firstRound = releaseWithTwoUpdates(spec, kafka);
    List<LedgerEntry> firstLedger = ledger(spec, kafka);
    stop(first);
    assertThat(state.resolve("kafka/data/.kafka_cleanshutdown"))
        .as("the hook stopped the broker cleanly")
        .exists();

    // Second run on the same state directory: same broker, same records, epsilon goes on.
    Process second = startRun(specFile, port, state, "second");
    assertThat(output("second"))
        .contains("continuing its topics and privacy ledger (cluster id " + clusterId("first"))
        .contains("topics exist: ");
    assertThat(ledger(spec, kafka)).startsWith(firstLedger.toArray(LedgerEntry[]::new));
    long secondRound = releaseWithTwoUpdates(spec, kafka);
    assertThat(secondRound).isGreaterThan(firstRound);
    assertEpsilonCountsEveryRoundSinceTheFirst(spec, kafka, secondRound);
    List<LedgerEntry> secondLedger = ledger(spec, kafka);
    second.destroyForcibly(); // SIGKILL: no hook, no clean shutdown
    second.waitFor(30, TimeUnit.SECONDS);

    // Third run after the kill: the broker recovers its logs; nothing committed is lost.
    startRun(specFile, port, state, "third");
    assertThat(output("third"))
        .contains("continuing its topics and privacy ledger (cluster id " + clusterId("first"));
    assertThat(ledger(spec, kafka)).startsWith(secondLedger.toArray(LedgerEntry[]::new));
    long thirdRound = releaseWithTwoUpdates(spec, kafka);
    assertThat(thirdRound).isGreaterThan(secondRound);
    assertEpsilonCountsEveryRoundSinceTheFirst(spec, kafka, thirdRound);
    try (PrivaggClient client = new PrivaggClient(spec, kafka)) {
      client.awaitModel(thirdRound, Duration.ofSeconds(30));
      assertThat(client.model(firstRound)).as("the first run's model").isNotNull();
      assertThat(client.model(secondRound)).as("the second run's model").isNotNull();
    }
  }

  @Test
  void portInUse_failsNamingTheFlag_andStartsNoBroker() throws Exception {
    Path specFile = Files.writeString(dir.resolve("embedded-run.yaml"), SPEC);
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("localhost"))) {
      int port = taken.getLocalPort();
      CliTestAccess.Result run =
          CliTestAccess.execute(
              "run",
              "--spec",
              specFile.toString(),
              "--embedded-kafka-port",
              Integer.toString(port),
              "--state-dir",
              dir.resolve("state").toString());
      assertThat(run.exitCode()).isEqualTo(1);
      assertThat(run.err())
          .contains("localhost:" + port + " is already in use")
          .contains("--embedded-kafka-port PORT")
          .contains("--bootstrap-servers localhost:" + port);
    }
    assertThat(dir.resolve("state/kafka/data")).doesNotExist();
  }

  /**
   * A budget for three rounds: {@code privagg run} says how long it lasts, prints each round and
   * the spent budget; {@code privagg status} reads the same from the topics (rejects too); a
   * restart on the spent budget says so at once.
   */
  @Test
  void progressLines_status_andARestartOnASpentBudget_sayWhereTheBudgetStands() throws Exception {
    double threeRounds =
        Accountant.named("rdp")
            .epsilon(
                PrivacyLedger.of(
                    JobSpecReader.parse("x", SPEC)
                        .roundCharge()
                        .event(NOISE_MULTIPLIER, 1)
                        .times(3)),
                DELTA)
            .epsilon();
    double budget = threeRounds * (1 + 1e-9);
    String text =
        SPEC.replace("jobId: embedded-run", "jobId: embedded-budget")
            .replace("budgetEpsilon: 100", "budgetEpsilon: " + budget);
    Path specFile = Files.writeString(dir.resolve("embedded-budget.yaml"), text);
    JobSpec spec = JobSpecReader.parse("embedded-budget", text);
    Path state = dir.resolve("state");
    int port = freePort();
    String kafka = "localhost:" + port;

    Process first = startRun(specFile, port, state, "budget-first");
    assertThat(output("budget-first"))
        .contains(
            "job embedded-budget: 3 more rounds fit the budget: about 6 s at one round per 2 s,"
                + " charged whether or not any client sends; a job without clients spends its"
                + " budget too");
    long round = releaseWithTwoUpdates(spec, kafka);
    try (KafkaProducer<byte[], byte[]> producer = producer(kafka)) {
      byte[] late = ClientUpdates.encode(spec, round, "late", new float[][] {{0.1f, 0f, 0f}});
      producer
          .send(
              new ProducerRecord<>(
                  spec.topics().updates(), "late".getBytes(StandardCharsets.UTF_8), late))
          .get();
    }
    awaitOutput("budget-first", "privacy budget spent");
    String spentLine =
        "job embedded-budget: privacy budget spent (epsilon "
            + Text.number(threeRounds)
            + " of "
            + Text.number(budget)
            + "): round 4 and later never open; the final model is round 3.";
    assertThat(output("budget-first"))
        .contains(
            "job embedded-budget round "
                + round
                + ": released, 2 updates, epsilon "
                + Text.number(
                    Accountant.named("rdp")
                        .epsilon(
                            PrivacyLedger.of(
                                spec.roundCharge().event(NOISE_MULTIPLIER, 1).times(round)),
                            DELTA)
                        .epsilon()))
        .contains("job embedded-budget round 3: released, ")
        .contains(spentLine);

    // privagg status reads the same from the topics; the late update is a STALE_ROUND reject.
    awaitStatus(spec, kafka, "STALE_ROUND");
    CliTestAccess.Result status =
        CliTestAccess.execute(
            "status", "--spec", specFile.toString(), "--bootstrap-servers", kafka, "--json");
    assertThat(status.exitCode()).as(status.err()).isZero();
    var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(status.out());
    assertThat(json.get("roundsReleased").asLong()).isEqualTo(3);
    assertThat(json.get("exhausted").asBoolean()).isTrue();
    assertThat(json.get("finalModelRound").asLong()).isEqualTo(3);
    assertThat(json.get("epsilonSpent").asDouble()).isEqualTo(threeRounds);
    assertThat(json.get("roundsRemaining").asLong()).isZero();
    assertThat(json.get("openRound").isNull()).isTrue();
    assertThat(json.get("rejects").get("STALE_ROUND").asLong()).isEqualTo(1);
    assertThat(json.get("rounds").get((int) round - 1).get("contributions").asLong()).isEqualTo(2);
    CliTestAccess.Result follow =
        CliTestAccess.execute(
            "status", "--spec", specFile.toString(), "--bootstrap-servers", kafka, "--follow");
    assertThat(follow.exitCode()).as("--follow ends once the budget is spent").isZero();
    assertThat(follow.out())
        .contains("job embedded-budget: 3 rounds charged (3 released, 0 withheld")
        .contains("budget spent: no round opens any more; the final model is round 3")
        .contains("rejected updates: STALE_ROUND 1");
    // A client reads the public budget-spent record and stops waiting at once.
    try (PrivaggClient client = new PrivaggClient(spec, kafka)) {
      client.awaitModel(3, Duration.ofSeconds(30));
      long asked = System.nanoTime();
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> client.awaitRound(4, Duration.ofSeconds(60)))
          .isInstanceOf(dev.privagg.client.BudgetSpentException.class)
          .hasMessageContaining("rounds from 4 on never open and the final model is round 3");
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> client.awaitModel(4, Duration.ofSeconds(60)))
          .isInstanceOf(dev.privagg.client.BudgetSpentException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - asked)).isLessThan(Duration.ofSeconds(30));
      assertThat(client.budgetSpent().getBaseModelRound()).isEqualTo(3);
      assertThat(client.latestRound().getRound()).as("the record is no round").isEqualTo(3);
    }
    stop(first);

    startRun(specFile, port, state, "budget-second");
    assertThat(output("budget-second"))
        .contains(
            "job embedded-budget: the privacy budget is already spent (epsilon "
                + Text.number(threeRounds)
                + " of "
                + Text.number(budget)
                + "): no round will open and the final model is round 3.");
  }

  /** Until {@code privagg status} counts a reject of {@code reason} (the rejects topic commits). */
  private static void awaitStatus(JobSpec spec, String kafka, String reason) throws Exception {
    long end = System.currentTimeMillis() + 30_000;
    while (System.currentTimeMillis() < end) {
      try (var follower =
          new dev.privagg.status.StatusFollower(
              dev.privagg.io.KafkaConnection.to(kafka), spec, Duration.ofSeconds(10))) {
        follower.catchUp(Duration.ofSeconds(10), r -> {});
        if (follower.tracker().snapshot().rejects().containsKey(reason)) {
          return;
        }
      }
      Thread.sleep(300);
    }
    throw new AssertionError("no " + reason + " reject within 30 s");
  }

  private void awaitOutput(String name, String text) throws Exception {
    long end = System.currentTimeMillis() + 60_000;
    while (!output(name).contains(text)) {
      if (System.currentTimeMillis() > end) {
        throw new AssertionError("no '" + text + "' within 60 s:\n" + output(name));
      }
      Thread.sleep(200);
    }
  }

  /**
   * Sends two clients' updates to the next round that is open long enough, as a client would (a
   * plain Kafka producer, keyed by client id), and waits for that round's model; returns the round.
   */
  private static long releaseWithTwoUpdates(JobSpec spec, String kafka) throws Exception {
    try (PrivaggClient client = new PrivaggClient(spec, kafka);
        KafkaProducer<byte[], byte[]> producer = producer(kafka)) {
      RoundAnnouncement open = awaitOpenRound(client);
      long round = open.getRound();
      for (String id : List.of("client-a", "client-b")) {
        byte[] update = ClientUpdates.encode(spec, round, id, new float[][] {{0.3f, 0.4f, 0f}});
        producer
            .send(
                new ProducerRecord<>(
                    spec.topics().updates(), id.getBytes(StandardCharsets.UTF_8), update))
            .get();
      }
      GlobalModel model = client.awaitModel(round, Duration.ofSeconds(30));
      assertThat(model.getPrivacy().getEpsilon()).isPositive();
      LedgerEntry charged =
          ledger(spec, kafka).stream().filter(e -> e.getRound() == round).findFirst().orElseThrow();
      assertThat(charged.getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
      assertThat(charged.getContributions()).as("both updates were summed").isEqualTo(2);
      return round;
    }
  }

  /** The latest announced round whose deadline is at least 500 ms away. */
  private static RoundAnnouncement awaitOpenRound(PrivaggClient client) throws Exception {
    long end = System.currentTimeMillis() + 30_000;
    while (System.currentTimeMillis() < end) {
      client.poll(Duration.ofMillis(100));
      RoundAnnouncement latest = client.latestRound();
      if (latest != null && latest.getDeadlineMillis() > System.currentTimeMillis() + 500) {
        return latest;
      }
    }
    throw new AssertionError("no round open for 500 ms more was announced within 30 s");
  }

  /**
   * Every round up to {@code round} is charged once, whichever run released or skipped it: the
   * epsilon after it is that of {@code round} rounds, not of the rounds since the latest start.
   */
  private static void assertEpsilonCountsEveryRoundSinceTheFirst(
      JobSpec spec, String kafka, long round) {
    List<LedgerEntry> ledger = ledger(spec, kafka);
    LedgerEntry entry =
        ledger.stream().filter(e -> e.getRound() == round).findFirst().orElseThrow();
    double expected =
        Accountant.named("rdp")
            .epsilon(
                PrivacyLedger.of(spec.roundCharge().event(NOISE_MULTIPLIER, 1).times(round)), DELTA)
            .epsilon();
    assertThat(entry.getEpsilonSpent()).isEqualTo(expected);
    assertThat(ledger.stream().filter(e -> e.getRound() <= round).map(LedgerEntry::getRound))
        .as("one entry per round from round 1")
        .doesNotHaveDuplicates()
        .hasSize((int) round);
  }

  /** The job's committed ledger entries, from the start of the topic. */
  private static List<LedgerEntry> ledger(JobSpec spec, String kafka) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    List<LedgerEntry> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      TopicPartition p = new TopicPartition(spec.topics().ledger(), 0);
      c.assign(List.of(p));
      c.seekToBeginning(List.of(p));
      long end = c.endOffsets(List.of(p)).get(p);
      while (c.position(p) < end) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
          LedgerEntry e = AvroCodec.decodeLedgerEntry(r.value());
          if (e.getJobId().equals(spec.jobId())) {
            out.add(e);
          }
        }
      }
    }
    return out;
  }

  private static KafkaProducer<byte[], byte[]> producer(String kafka) {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);
    return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /**
   * Starts {@code privagg run} as {@code ./privagg} does (target/classes and the runtime classpath,
   * the CLI's logging), without {@code --bootstrap-servers}; returns once the job runs.
   */
  private Process startRun(Path specFile, int port, Path state, String name) throws Exception {
    Path classpathFile = Path.of("target/runtime.classpath");
    assertThat(classpathFile).as("written by the build's process-classes phase").exists();
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx1g",
            "-Dlog4j2.configurationFile="
                + Path.of("deploy/log4j2-cli.properties").toAbsolutePath(),
            "-cp",
            Path.of("target/classes").toAbsolutePath()
                + java.io.File.pathSeparator
                + Files.readString(classpathFile).trim(),
            Main.class.getName(),
            "run",
            "--spec",
            specFile.toString(),
            "--embedded-kafka-port",
            Integer.toString(port),
            "--state-dir",
            state.toString(),
            "--checkpoint-interval-ms",
            "300");
    Process process =
        new ProcessBuilder(command)
            .redirectOutput(dir.resolve(name + ".out").toFile())
            .redirectError(dir.resolve(name + ".err").toFile())
            .start();
    started.add(process);
    long end = System.currentTimeMillis() + 90_000;
    while (!output(name).contains("Ctrl-C stops it")) {
      if (!process.isAlive() || System.currentTimeMillis() > end) {
        throw new AssertionError(
            "privagg run ("
                + name
                + ") did not start its job: "
                + (process.isAlive()
                    ? "still starting after 90 s"
                    : "exited " + process.exitValue())
                + "\nstdout:\n"
                + output(name)
                + "\nstderr:\n"
                + Files.readString(dir.resolve(name + ".err")));
      }
      Thread.sleep(200);
    }
    return process;
  }

  /** SIGTERM, as Ctrl-C: the shutdown hook cancels the job and stops the broker. */
  private void stop(Process process) throws Exception {
    process.destroy();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("stopped within 60 s").isTrue();
  }

  private String output(String name) throws IOException {
    Path out = dir.resolve(name + ".out");
    return Files.exists(out) ? Files.readString(out) : "";
  }

  private String clusterId(String name) throws IOException {
    String out = output(name);
    int at = out.indexOf("cluster id ") + "cluster id ".length();
    return out.substring(at, out.indexOf(')', at));
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("localhost"))) {
      return socket.getLocalPort();
    }
  }
}
