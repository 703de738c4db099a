package dev.privagg.job;

import static dev.privagg.job.FaultScenarios.producer;
import static dev.privagg.job.FaultScenarios.send;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.FaultScenarios.Placement;
import dev.privagg.job.FaultScenarios.TrainingJob;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Real failures and operator actions on a real cluster: each scenario runs the job on one Flink
 * session cluster (JobManager and TaskManager JVMs from deploy/local, shared by the scenarios)
 * against a real broker JVM, while a {@code read_uncommitted} reader keeps every record of the
 * public topics (models and rounds) as DESIGN's threat model allows. Covered:
 *
 * <ul>
 *   <li>TaskManager SIGKILL mid-round and right after a release, before the checkpoint that commits
 *       it; keyed noise, secure noise, and early close with the updates skewed over two partitions
 *       (some in a burst);
 *   <li>JobManager SIGKILL mid-round, recovered as an operator would: start the JobManager again
 *       and resubmit from the retained last checkpoint;
 *   <li>cancel and a fresh submit (no savepoint) mid-round;
 *   <li>restore from an older savepoint after further rounds;
 *   <li>stop with a savepoint and resume from it.
 * </ul>
 *
 * <p>In every case: for each (job, round) every copy a {@code read_uncommitted} reader sees on a
 * public topic has the same bytes (DESIGN invariant 9); with keyed noise each round's tensors equal
 * a failure-free reference run's (same key, job id and inputs, on the MiniCluster); the committed
 * ledger releases each round once, with the accountant's epsilon for that many rounds (the budget
 * never resets or rolls back), and with keyed noise the reference's contributions.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FaultInjectionIT extends KafkaFlinkTestBase {
  private static final Path STATE = Path.of("target/fault-injection").toAbsolutePath();
  private static final Duration CLIENT_PATIENCE = Duration.ofSeconds(180);

  /** A client sends to an announced round only while this much of it is left. */
  private static final long SEND_MARGIN_MILLIS = 2_000;

  private final String run = UUID.randomUUID().toString().substring(0, 8);
  // Deadline rounds are long enough for a crash and its recovery to fit in one round.
  // A killed TaskManager's recovery, plus two checkpoints until a release is public, must leave
  // the next round open long enough for the clients (a loaded 2-core machine took over 20 s).
  private final TrainingJob tmKeyed = job("tm-keyed", "keyed", 30);
  private final TrainingJob tmSecure = job("tm-secure", "secure", 30);
  // Closes at m = 3 updates long before its deadline.
  private final TrainingJob tmEarly =
      new TrainingJob("tm-early-" + run, "keyed", true, Placement.SKEWED, 90);
  private final TrainingJob jmKeyed = job("jm-keyed", "keyed", 20);
  private final TrainingJob jmSecure = job("jm-secure", "secure", 20);
  // Long enough that the new job starts inside the round it takes over.
  private final TrainingJob cancelKeyed = job("cancel-keyed", "keyed", 20);
  private final TrainingJob restoreKeyed = job("restore-keyed", "keyed", 20);
  private final TrainingJob stopKeyed = job("stop-keyed", "keyed", 12);

  private Path key;
  private LocalCluster cluster;

  /** Per keyed job and round: the reference run's tensors and contributions. */
  private final Map<String, Map<Long, float[]>> referenceTensors = new HashMap<>();

  private final Map<String, Map<Long, Long>> referenceContributions = new HashMap<>();

  private TrainingJob job(String name, String noise, int timeoutSeconds) {
    return new TrainingJob(name + "-" + run, noise, false, Placement.ANY, timeoutSeconds);
  }

  @BeforeAll
  void startClusterAndRunReferences() throws Exception {
    Files.createDirectories(STATE);
    key = STATE.resolve("noise.key");
    // As `openssl rand -hex 32 > noise.key` writes it: 64 hex digits and a newline.
    Files.writeString(key, "6661756c742d696e6a656374696f6e2d746573742d6e6f6973652d6b65792d31\n");
    cluster = new LocalCluster(STATE);
    // The cluster's JVMs start while the references run on the MiniCluster.
    CompletableFuture<Void> started =
        CompletableFuture.runAsync(
            () -> {
              try {
                cluster.start();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    Map<TrainingJob, Long> rounds = new LinkedHashMap<>();
    rounds.put(tmKeyed, 3L);
    rounds.put(tmEarly, 3L);
    rounds.put(jmKeyed, 3L);
    rounds.put(cancelKeyed, 3L);
    rounds.put(restoreKeyed, 4L);
    rounds.put(stopKeyed, 3L);
    // Keyed noise derives from the key, the models topic, the job and the round: each reference
    // uses its cluster run's topic names (on the in-process broker).
    Map<TrainingJob, String> runs =
        Map.of(
            tmKeyed,
            "tm",
            tmEarly,
            "tm",
            jmKeyed,
            "jm",
            cancelKeyed,
            "cancel",
            restoreKeyed,
            "restore",
            stopKeyed,
            "stop");
    runReferences(rounds, runs);
    started.join();
  }

  @AfterAll
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * The failure-free runs on the in-process broker, one MiniCluster job per cluster run, with short
   * rounds (deadlines never enter a release; round 1 has 10 s of grace, as the reference runs while
   * the cluster's JVMs start) and the same inputs and partition placement.
   */
  private void runReferences(Map<TrainingJob, Long> rounds, Map<TrainingJob, String> runs)
      throws Exception {
    Map<JobSpec, Long> specs = new LinkedHashMap<>();
    Map<String, List<JobSpec>> byRun = new LinkedHashMap<>();
    rounds.forEach(
        (job, count) -> {
          String prefix = runs.get(job) + "-" + run;
          JobSpec spec =
              JobSpecReader.parse(
                  "reference " + job.jobId(),
                  job.yaml(prefix, job.closeEarly() ? job.timeoutSeconds() : 4, 10, key));
          specs.put(spec, count);
          byRun.computeIfAbsent(prefix, p -> new ArrayList<>()).add(spec);
        });
    // One cluster run's jobs at a time: their rounds keep in step with each other, not with other
    // runs' jobs (a job whose announcement came first would see its deadline pass meanwhile).
    for (List<JobSpec> group : byRun.values()) {
      Map<JobSpec, Long> groupRounds = new LinkedHashMap<>();
      group.forEach(spec -> groupRounds.put(spec, specs.get(spec)));
      runReference(groupRounds);
    }
  }

  /** One failure-free reference run of jobs that share topics (one Flink job). */
  private void runReference(Map<JobSpec, Long> specs) throws Exception {
    List<JobSpec> group = List.copyOf(specs.keySet());
    startJob(group, 1);
    long last = Collections.max(specs.values());
    try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap)) {
      for (long r = 1; r <= last; r++) {
        final long round = r;
        List<JobSpec> playing = group.stream().filter(s -> round <= specs.get(s)).toList();
        // The jobs share topics: every wait is for this job's record of this round.
        for (JobSpec spec : playing) {
          announcementsUntil(
              spec,
              l ->
                  l.stream()
                      .anyMatch(a -> a.getJobId().equals(spec.jobId()) && a.getRound() == round),
              Duration.ofSeconds(60));
        }
        for (JobSpec spec : playing) {
          send(producer, spec, r, jobOf(spec).placement());
        }
        for (JobSpec spec : playing) {
          GlobalModel model =
              modelsUntil(
                      spec,
                      l -> l.stream().anyMatch(m -> isRound(m, spec, round)),
                      Duration.ofSeconds(60))
                  .stream()
                  .filter(m -> isRound(m, spec, round))
                  .findFirst()
                  .orElseThrow();
          referenceTensors
              .computeIfAbsent(spec.jobId(), j -> new HashMap<>())
              .put(r, FaultScenarios.tensors(model));
        }
      }
    }
    long total = specs.values().stream().mapToLong(Long::longValue).sum();
    for (LedgerEntry e :
        ledgerUntil(
            group.get(0),
            l -> l.stream().filter(e -> e.getOutcome() == LedgerOutcome.RELEASED).count() >= total,
            Duration.ofSeconds(60))) {
      if (e.getOutcome() == LedgerOutcome.RELEASED) {
        referenceContributions
            .computeIfAbsent(e.getJobId(), j -> new HashMap<>())
            .put(e.getRound(), e.getContributions());
      }
    }
    stopJobs();
  }

  private static boolean isRound(GlobalModel m, JobSpec spec, long round) {
    return m.getJobId().equals(spec.jobId()) && m.getRound() == round;
  }

  private TrainingJob jobOf(JobSpec spec) {
    return List.of(
            tmKeyed, tmSecure, tmEarly, jmKeyed, jmSecure, cancelKeyed, restoreKeyed, stopKeyed)
        .stream()
        .filter(j -> j.jobId().equals(spec.jobId()))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void killedTaskManagers_leaveOnePublicPayloadPerRound_andKeyedReleasesEqualTheReference()
      throws Exception {
    try (ClusterRun c = new ClusterRun("tm", 8000, tmKeyed, tmSecure, tmEarly)) {
      c.sendRound(1);
      c.sendRound(2);
      // Mid-round for the deadline jobs; for the early-close job right after its round 2 was
      // released, before the checkpoint (every 8 s) that would commit it.
      c.awaitUncommittedModel(tmEarly, 2);
      cluster.killTaskManager();
      c.sendRound(3);
      // Right after round 3 is written, before the checkpoint that commits it.
      c.awaitUncommittedModel(tmKeyed, 3);
      c.awaitUncommittedModel(tmSecure, 3);
      cluster.killTaskManager();
      c.awaitCommittedModels(3);
      c.check(3);
    }
  }

  @Test
  void killedJobManager_resubmittedFromItsLastCheckpoint_continuesWithoutRepeatingARound()
      throws Exception {
    try (ClusterRun c = new ClusterRun("jm", 3000, jmKeyed, jmSecure)) {
      c.sendRound(1);
      c.sendRound(2);
      cluster.killJobManager(); // mid-round: round 2's updates are in Kafka, the round is open
      // What an operator does without high availability: start the JobManager again and
      // resubmit the job from the checkpoint the dead one left behind.
      cluster.startFlink();
      c.resubmit(cluster.latestRetainedCheckpoint(c.flinkJob).toString());
      c.sendRound(3);
      c.awaitCommittedModels(3);
      c.check(3);
    }
  }

  @Test
  void cancelAndFreshSubmit_midRound_adoptsTheLedgerAndRepeatsNoRound() throws Exception {
    try (ClusterRun c = new ClusterRun("cancel", 2000, cancelKeyed)) {
      c.sendRound(1);
      c.sendRound(2);
      cluster.cancel(c.flinkJob);
      // No savepoint: the new job knows only the topics. It takes round 2 over with its announced
      // window and reads that window's updates again: clients need not send them twice.
      c.resubmit(null);
      c.sendRound(3);
      c.awaitCommittedModels(3);
      c.check(3);
    }
  }

  @Test
  void restoreFromAnOlderSavepoint_neitherRollsBackTheBudgetNorRepeatsARound() throws Exception {
    try (ClusterRun c = new ClusterRun("restore", 2000, restoreKeyed)) {
      c.sendRound(1);
      c.sendRound(2);
      String older = cluster.savepoint(c.flinkJob, false); // round 2 open
      c.sendRound(3);
      c.sendRound(4);
      cluster.cancel(c.flinkJob); // round 4 open, rounds 2 and 3 released since the savepoint
      // The restored job takes round 4 over with its announced window (the updates it read
      // again from the savepoint's offsets are its members).
      c.resubmit(older);
      c.awaitCommittedModels(4);
      c.check(4);
    }
  }

  @Test
  void stopWithSavepointThenResume_closesTheOpenRoundOnce() throws Exception {
    try (ClusterRun c = new ClusterRun("stop", 2000, stopKeyed)) {
      c.sendRound(1);
      c.sendRound(2);
      String savepoint = cluster.savepoint(c.flinkJob, true); // round 2 open, not drained
      c.resubmit(savepoint);
      c.sendRound(3);
      c.awaitCommittedModels(3);
      c.check(3);
    }
  }

  /**
   * One Flink job on the session cluster serving some training jobs on topics of its own, with a
   * producer for the clients' updates, the clients' committed view of announcements and models, and
   * the read_uncommitted readers of both public topics.
   */
  private final class ClusterRun implements AutoCloseable {
    final List<TrainingJob> jobs;
    final List<JobSpec> specs = new ArrayList<>();
    final List<Path> specFiles = new ArrayList<>();
    final long checkpointMillis;
    final KafkaProducer<byte[], byte[]> producer = producer(LocalCluster.KAFKA);
    final PublicTopicReader announcements;
    final PublicTopicReader committedModels;
    final PublicTopicReader uncommittedModels;
    final PublicTopicReader uncommittedRounds;
    String flinkJob;

    ClusterRun(String name, long checkpointMillis, TrainingJob... jobs) throws Exception {
      this.jobs = List.of(jobs);
      this.checkpointMillis = checkpointMillis;
      String prefix = name + "-" + run;
      for (TrainingJob job : jobs) {
        Path file = STATE.resolve(job.jobId() + ".yaml");
        Files.writeString(
            file, job.yaml(prefix, job.timeoutSeconds(), job.startGraceSeconds(), key));
        specFiles.add(file);
        specs.add(JobSpecReader.read(file));
      }
      JobSpec.Topics topics = specs.get(0).topics();
      flinkJob = cluster.submit(specFiles, checkpointMillis, null);
      // Subscribed once the job has created its topics (a reader must not create them).
      announcements =
          PublicTopicReader.rounds(LocalCluster.KAFKA, topics.rounds(), "read_committed");
      committedModels =
          PublicTopicReader.models(LocalCluster.KAFKA, topics.models(), "read_committed");
      uncommittedModels =
          PublicTopicReader.models(LocalCluster.KAFKA, topics.models(), "read_uncommitted");
      uncommittedRounds =
          PublicTopicReader.rounds(LocalCluster.KAFKA, topics.rounds(), "read_uncommitted");
    }

    void resubmit(String savepoint) {
      flinkJob = cluster.submit(specFiles, checkpointMillis, savepoint);
    }

    /**
     * As clients do: for each job, wait for a committed announcement of {@code round} with time
     * left before its deadline, then send that round's updates.
     */
    void sendRound(long round) {
      for (JobSpec spec : specs) {
        announcements.until(
            l ->
                l.stream()
                    .map(copy -> AvroCodec.decodeAnnouncement(copy.value()))
                    .anyMatch(
                        a ->
                            a.getJobId().equals(spec.jobId())
                                && a.getRound() == round
                                && a.getDeadlineMillis()
                                    > System.currentTimeMillis() + SEND_MARGIN_MILLIS),
            CLIENT_PATIENCE,
            "an open round " + round + " of " + spec.jobId() + "; see " + cluster.logs());
        send(producer, spec, round, jobOf(spec).placement());
      }
    }

    void awaitUncommittedModel(TrainingJob job, long round) {
      uncommittedModels.until(
          l -> uncommittedModels.has(job.jobId(), round),
          CLIENT_PATIENCE,
          "round " + round + " of " + job.jobId() + "; see " + cluster.logs());
    }

    void awaitCommittedModels(long round) {
      for (TrainingJob job : jobs) {
        committedModels.until(
            l -> committedModels.has(job.jobId(), round),
            CLIENT_PATIENCE,
            "committed round " + round + " of " + job.jobId() + "; see " + cluster.logs());
      }
    }

    /** Every property of the class Javadoc, for rounds 1 to {@code rounds} of every job. */
    void check(long rounds) throws Exception {
      uncommittedModels.toEnd(Duration.ofSeconds(30));
      uncommittedRounds.toEnd(Duration.ofSeconds(30));
      committedModels.toEnd(Duration.ofSeconds(30));
      SoftAssertions soft = new SoftAssertions();
      try (PublicTopicReader ledgerTopic = ledgerReader()) {
        List<LedgerEntry> ledger =
            ledgerTopic.toEnd(Duration.ofSeconds(30)).stream()
                .map(copy -> AvroCodec.decodeLedgerEntry(copy.value()))
                .toList();
        for (int i = 0; i < jobs.size(); i++) {
          checkJob(soft, jobs.get(i), specs.get(i), rounds, ledger);
        }
      }
      soft.assertAll();
    }

    private void checkJob(
        SoftAssertions soft, TrainingJob job, JobSpec spec, long rounds, List<LedgerEntry> ledger) {
      String id = job.jobId();
      soft.assertThat(uncommittedModels.roundsWithTwoPayloads(id, FaultScenarios::describeModel))
          .as("%s: rounds with two different payloads on the public models topic", id)
          .isEmpty();
      soft.assertThat(
              uncommittedRounds.roundsWithTwoPayloads(id, FaultScenarios::describeAnnouncement))
          .as("%s: rounds with two different payloads on the public rounds topic", id)
          .isEmpty();
      List<Long> committed = new ArrayList<>(committedModels.copiesByRound(id).keySet());
      List<Long> committedCopies =
          committedModels.copiesByRound(id).entrySet().stream()
              .filter(e -> e.getValue().size() > 1)
              .map(Map.Entry::getKey)
              .toList();
      soft.assertThat(committed)
          .as("%s: rounds in the read_committed models topic", id)
          .startsWith(rangeFrom(0, rounds));
      soft.assertThat(committedCopies).as("%s: rounds committed twice", id).isEmpty();
      Map<Long, List<byte[]>> copies = uncommittedModels.copiesByRound(id);
      System.out.printf(
          "fault injection %s: read_uncommitted copies per round %s%n",
          id,
          copies.entrySet().stream()
              .map(
                  e ->
                      e.getKey()
                          + "="
                          + e.getValue().size()
                          + (PublicTopicReader.distinct(e.getValue()).size() > 1
                              ? "(" + PublicTopicReader.distinct(e.getValue()).size() + " payloads)"
                              : ""))
              .toList());
      if (job.keyed()) {
        for (long r = 1; r <= rounds; r++) {
          float[] expected = referenceTensors.get(id).get(r);
          for (byte[] copy : copies.getOrDefault(r, List.of())) {
            soft.assertThat(FaultScenarios.tensors(AvroCodec.decodeModel(copy)))
                .as("%s round %d: tensors of a public copy vs the reference run's", id, r)
                .isEqualTo(expected);
          }
        }
      }
      List<LedgerEntry> released =
          ledger.stream()
              .filter(e -> e.getJobId().equals(id) && e.getOutcome() == LedgerOutcome.RELEASED)
              .toList();
      soft.assertThat(released)
          .extracting(LedgerEntry::getRound)
          .as("%s: released rounds in the committed ledger", id)
          .startsWith(rangeFrom(1, rounds))
          .doesNotHaveDuplicates();
      PrivacyEvent charge = spec.roundCharge().event(spec.privacy().noiseMultiplier(), 1);
      for (LedgerEntry e : released) {
        soft.assertThat(e.getEpsilonSpent())
            .as("%s round %d: epsilon spent vs the accountant", id, e.getRound())
            .isEqualTo(
                Accountant.named(spec.privacy().accountant())
                    .epsilon(PrivacyLedger.of(charge.times(e.getRound())), spec.privacy().delta())
                    .epsilon());
        if (job.keyed() && e.getRound() <= rounds) {
          soft.assertThat(e.getContributions())
              .as("%s round %d: contributions vs the reference run's", id, e.getRound())
              .isEqualTo(referenceContributions.get(id).get(e.getRound()));
        }
      }
    }

    private PublicTopicReader ledgerReader() {
      return PublicTopicReader.ledger(
          LocalCluster.KAFKA, specs.get(0).topics().ledger(), "read_committed");
    }

    @Override
    public void close() throws Exception {
      try {
        if (flinkJob != null) {
          cluster.cancel(flinkJob);
        }
      } catch (Exception | AssertionError e) {
        System.out.println("fault injection: could not cancel " + flinkJob + ": " + e);
      } finally {
        producer.close();
        announcements.close();
        committedModels.close();
        uncommittedModels.close();
        uncommittedRounds.close();
      }
    }
  }

  private static Long[] rangeFrom(long first, long last) {
    Long[] out = new Long[(int) (last - first + 1)];
    for (int i = 0; i < out.length; i++) {
      out[i] = first + i;
    }
    return out;
  }
}
