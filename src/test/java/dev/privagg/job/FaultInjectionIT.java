package dev.privagg.job;

import static dev.privagg.job.FaultScenarios.producer;
import static dev.privagg.job.FaultScenarios.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.bandmf.AmplifiedBandMf;
import dev.privagg.correlated.BltPlan;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.FaultScenarios.Placement;
import dev.privagg.job.FaultScenarios.TrainingJob;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.decide.ClientGroups;
import dev.privagg.job.decide.DeploymentNoise;
import dev.privagg.job.decode.ClientKeys;
import dev.privagg.job.ledger.Deployment;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.ClippedSum;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * public topics (models and rounds) as the threat model (docs/design.md) allows. Covered:
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
 * public topic has the same bytes (design.md invariant 9); the committed ledger releases each round
 * once, with the accountant's epsilon for that many rounds (the budget never resets or rolls back).
 *
 * <p>With keyed noise, against a failure-free reference run (same key, job id, topic names and
 * inputs, on the MiniCluster and the in-process broker): that run is another deployment, so its
 * keyed noise and its server-side sampling draws differ (docs/design.md, {@link Deployment}). Each
 * run's deployment nonce is read from its ledger, and each round's tensors must differ from the
 * reference's by exactly what the two nonces explain: the accumulated {@code lr / m} times the
 * difference of the two runs' noise and of the clipped sums of the clients each run's draws sampled
 * (no difference for the early-close job, which samples nothing), up to the float rounding of each
 * release. So a round whose members or noise changed under a failure shows, as it did when the
 * reference's tensors had to be equal. Each round's contributions are the count its sampling draws
 * take (the reference's checked the same way), and every ledger entry of a keyed job, committed or
 * aborted, carries one deployment nonce across all the failures and restarts of its scenario: the
 * nonce is read back at every start.
 *
 * <p>A keyed BLT job (correlated noise, privacy.mechanism: blt) rides along in the TaskManager,
 * JobManager and stop-with-savepoint scenarios, checked the same way: its noise sigma (C^-1 Z)_t is
 * recomputed for both deployments ({@link DeploymentNoise}), its epsilon is one Gaussian's of the
 * prefix's noise multiplier. Cancel and a fresh submit, and the restore of an older savepoint,
 * would forget who contributed to the rounds charged since: a BLT job there, a Flink job of its
 * own, fails for good with the participation refusal, releases nothing more and charges nothing.
 *
 * <p>A keyed amplified-banded-MF job (privacy.mechanism: bandmf) rides along in the TaskManager and
 * stop-with-savepoint scenarios: each round's members are the clients its deployment's keyed group
 * and sampling draws take, its noise sigma (C^-1 Z)_t for the banded C is recomputed for both
 * deployments, and its epsilon is that of ceil(t / b) sampled Gaussians.
 *
 * <p>A keyed statistics job (a {@code statistics:} spec, its clients sampled) rides along in the
 * TaskManager and stop-with-savepoint scenarios: each round's release is that round's noisy average
 * of the clients' encoded sums alone (nothing accumulates), so it must differ from the reference's
 * by the two deployments' members and noise of that round only.
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
  // Closes at m = 3 updates long before its deadline; its next round still opens at that deadline,
  // so its rounds keep the deadline jobs' schedule.
  private final TrainingJob tmEarly =
      new TrainingJob("tm-early-" + run, "keyed", true, Placement.SKEWED, 30);
  private final TrainingJob jmKeyed = job("jm-keyed", "keyed", 20);
  private final TrainingJob jmSecure = job("jm-secure", "secure", 20);
  // Long enough that the new job starts inside the round it takes over: a cancel and a submit
  // took 10 to 18 s of a 20 s round on a loaded 2-core machine, and once more than 20 s.
  private final TrainingJob cancelKeyed = job("cancel-keyed", "keyed", 30);
  private final TrainingJob restoreKeyed = job("restore-keyed", "keyed", 30);
  private final TrainingJob stopKeyed = job("stop-keyed", "keyed", 12);
  // Correlated noise rides along where a restart keeps its state; where a start would lose it
  // (cancel and fresh submit, an older savepoint) it is refused, so it runs as a Flink job of its
  // own there, the refusal failing no other training job.
  private final TrainingJob tmBlt = bltJob("tm-blt", 30);
  private final TrainingJob jmBlt = bltJob("jm-blt", 20);
  private final TrainingJob stopBlt = bltJob("stop-blt", 12);
  // As long as their keyed jobs' rounds, so that the two schedules stay in step.
  private final TrainingJob cancelBlt = bltJob("cancel-blt", 30);
  private final TrainingJob restoreBlt = bltJob("restore-blt", 30);
  // Amplified banded MF rides along where a restart keeps its state: its groups, sampling draws,
  // buffers and charges must come out as in the reference.
  private final TrainingJob tmBand = bandJob("tm-band", 30);
  private final TrainingJob stopBand = bandJob("stop-band", 12);
  // Its buffers are lost to a fresh submit: refused as BLT is, once the keyed job's check is done.
  private final TrainingJob cancelBand = bandJob("cancel-band", 30);
  // A statistics job rides along where a restart keeps its state: each round's release is that
  // round's noisy sums alone, so a round repeated or its members changed would show at once.
  private final TrainingJob tmStats = statisticsJob("tm-stats", 30);
  private final TrainingJob stopStats = statisticsJob("stop-stats", 12);

  private Path key;
  private LocalCluster cluster;

  /** Per keyed job and round (from 0): the reference run's tensors and contributions. */
  private final Map<String, Map<Long, float[]>> referenceTensors = new HashMap<>();

  private final Map<String, Map<Long, Long>> referenceContributions = new HashMap<>();

  /** Per keyed job: the reference run's spec and the deployment nonce its ledger carries. */
  private final Map<String, JobSpec> referenceSpecs = new HashMap<>();

  private final Map<String, String> referenceDeployments = new HashMap<>();

  private TrainingJob job(String name, String noise, int timeoutSeconds) {
    return new TrainingJob(name + "-" + run, noise, false, Placement.ANY, timeoutSeconds);
  }

  private TrainingJob bltJob(String name, int timeoutSeconds) {
    return new TrainingJob(name + "-" + run, "keyed", false, Placement.ANY, timeoutSeconds, "blt");
  }

  private TrainingJob bandJob(String name, int timeoutSeconds) {
    return new TrainingJob(
        name + "-" + run, "keyed", false, Placement.ANY, timeoutSeconds, "bandmf");
  }

  private TrainingJob statisticsJob(String name, int timeoutSeconds) {
    return new TrainingJob(
        name + "-" + run, "keyed", false, Placement.ANY, timeoutSeconds, "statistics");
  }

  @BeforeAll
  void startClusterAndRunReferences() throws Exception {
    Files.createDirectories(STATE);
    key = STATE.resolve("noise.key");
    // As `openssl rand -hex 32 > noise.key` writes it: 64 hex digits and a newline.
    Files.writeString(key, "6661756c742d696e6a656374696f6e2d746573742d6e6f6973652d6b65792d31\n");
    // Ports of its own, so that it can run beside other cluster tests on one machine.
    cluster = new LocalCluster(STATE, 19792, 18781, 16823);
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
    rounds.put(tmBlt, 3L);
    rounds.put(jmBlt, 3L);
    rounds.put(stopBlt, 3L);
    rounds.put(tmBand, 3L);
    rounds.put(stopBand, 3L);
    rounds.put(tmStats, 3L);
    rounds.put(stopStats, 3L);
    // Keyed noise derives from the key, the deployment nonce, the models topic, the job and the
    // round: each reference uses its cluster run's topic names (on the in-process broker), so only
    // the nonce differs.
    Map<TrainingJob, String> runs = new HashMap<>();
    runs.put(tmKeyed, "tm");
    runs.put(tmEarly, "tm");
    runs.put(jmKeyed, "jm");
    runs.put(cancelKeyed, "cancel");
    runs.put(restoreKeyed, "restore");
    runs.put(stopKeyed, "stop");
    runs.put(tmBlt, "tm");
    runs.put(jmBlt, "jm");
    runs.put(stopBlt, "stop");
    runs.put(tmBand, "tm");
    runs.put(stopBand, "stop");
    runs.put(tmStats, "tm");
    runs.put(stopStats, "stop");
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
   * rounds of 4 s (deadlines never enter a release; round 1 has 10 s of grace, as the reference
   * runs while the cluster's JVMs start; the early-close job's too, so it keeps in step with the
   * deadline job it shares a Flink job with) and the same inputs and partition placement.
   */
  private void runReferences(Map<TrainingJob, Long> rounds, Map<TrainingJob, String> runs)
      throws Exception {
    Map<JobSpec, Long> specs = new LinkedHashMap<>();
    Map<String, List<JobSpec>> byRun = new LinkedHashMap<>();
    rounds.forEach(
        (job, count) -> {
          String prefix = runs.get(job) + "-" + run;
          JobSpec spec =
              JobSpecReader.parse("reference " + job.jobId(), job.yaml(prefix, 4, 10, key));
          specs.put(spec, count);
          referenceSpecs.put(spec.jobId(), spec);
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
    for (JobSpec spec : group) {
      GlobalModel initial =
          modelsUntil(
                  spec, l -> l.stream().anyMatch(m -> isRound(m, spec, 0)), Duration.ofSeconds(60))
              .stream()
              .filter(m -> isRound(m, spec, 0))
              .findFirst()
              .orElseThrow();
      referenceTensors.get(spec.jobId()).put(0L, FaultScenarios.tensors(initial));
    }
    long total = specs.values().stream().mapToLong(Long::longValue).sum();
    Map<String, Set<String>> deployments = new HashMap<>();
    for (LedgerEntry e :
        ledgerUntil(
            group.get(0),
            l -> l.stream().filter(e -> e.getOutcome() == LedgerOutcome.RELEASED).count() >= total,
            Duration.ofSeconds(60))) {
      deployments.computeIfAbsent(e.getJobId(), j -> new HashSet<>()).add(e.getDeployment());
      if (e.getOutcome() == LedgerOutcome.RELEASED) {
        referenceContributions
            .computeIfAbsent(e.getJobId(), j -> new HashMap<>())
            .put(e.getRound(), e.getContributions());
      }
    }
    for (JobSpec spec : group) {
      Set<String> nonces = deployments.get(spec.jobId());
      assertThat(nonces)
          .as("reference %s: the deployment nonces of its ledger entries", spec.jobId())
          .hasSize(1)
          .allMatch(Deployment::isNonce);
      String nonce = nonces.iterator().next();
      referenceDeployments.put(spec.jobId(), nonce);
      // What the check of the cluster runs relies on: a round's members are the clients its
      // deployment's draws sample (every client sends in the window), or the first m.
      for (long r = 1; r <= specs.get(spec); r++) {
        assertThat(referenceContributions.get(spec.jobId()).get(r))
            .as("reference %s round %d: contributions vs its sampling draws", spec.jobId(), r)
            .isEqualTo(expectedContributions(spec, nonce, r));
      }
    }
    stopJobs();
  }

  private static boolean isRound(GlobalModel m, JobSpec spec, long round) {
    return m.getJobId().equals(spec.jobId()) && m.getRound() == round;
  }

  private TrainingJob jobOf(JobSpec spec) {
    return List.of(
            tmKeyed,
            tmSecure,
            tmEarly,
            jmKeyed,
            jmSecure,
            cancelKeyed,
            restoreKeyed,
            stopKeyed,
            tmBlt,
            jmBlt,
            stopBlt,
            cancelBlt,
            restoreBlt,
            tmBand,
            stopBand,
            cancelBand,
            tmStats,
            stopStats)
        .stream()
        .filter(j -> j.jobId().equals(spec.jobId()))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void killedTaskManagers_leaveOnePublicPayloadPerRound_andKeyedReleasesEqualTheReference()
      throws Exception {
    try (ClusterRun c =
        new ClusterRun("tm", 8000, tmKeyed, tmSecure, tmEarly, tmBlt, tmBand, tmStats)) {
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
      c.awaitUncommittedModel(tmBlt, 3);
      c.awaitUncommittedModel(tmBand, 3);
      c.awaitUncommittedModel(tmStats, 3);
      cluster.killTaskManager();
      c.awaitCommittedModels(3);
      c.check(3);
    }
  }

  @Test
  void killedJobManager_resubmittedFromItsLastCheckpoint_continuesWithoutRepeatingARound()
      throws Exception {
    try (ClusterRun c = new ClusterRun("jm", 3000, jmKeyed, jmSecure, jmBlt)) {
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
    try (ClusterRun c = new ClusterRun("cancel", 2000, cancelKeyed);
        ClusterRun blt = new ClusterRun("cancel-blt", 2000, cancelBlt)) {
      c.sendRound(1);
      blt.sendRound(1);
      c.sendRound(2);
      // Cancelled and submitted again first, so that the new job starts inside round 2's window.
      cluster.cancel(c.flinkJob);
      // No savepoint: the new job knows only the topics. It takes round 2 over with its announced
      // window and reads that window's updates again: clients need not send them twice.
      c.resubmit(null);
      blt.sendRound(2);
      blt.awaitCommittedModels(1);
      cluster.cancel(blt.flinkJob);
      List<LedgerEntry> charged = blt.committedLedger();
      // A BLT job would forget who contributed to round 1: refused.
      blt.resubmit(null);
      blt.awaitRefusal(charged.size() + " charged rounds but the state is empty (a fresh submit)");
      c.sendRound(3);
      c.awaitCommittedModels(3);
      c.check(3);
      blt.checkNothingMoreReleased(charged);
    }
    // In the slot the refused BLT job left.
    try (ClusterRun band = new ClusterRun("cancel-band", 2000, cancelBand)) {
      band.sendRound(1);
      band.awaitCommittedModels(1);
      cluster.cancel(band.flinkJob);
      List<LedgerEntry> charged = band.committedLedger();
      long lastRound = charged.stream().mapToLong(LedgerEntry::getRound).max().orElse(0);
      // The ledger counts one sampled Gaussian per participation: ceil(t / b) through round t.
      long participations = (lastRound + FaultScenarios.BANDS - 1) / FaultScenarios.BANDS;
      band.resubmit(null);
      band.awaitRefusal(participations + " charged rounds but the state is empty (a fresh submit)");
      band.checkNothingMoreReleased(charged);
    }
  }

  @Test
  void restoreFromAnOlderSavepoint_neitherRollsBackTheBudgetNorRepeatsARound() throws Exception {
    try (ClusterRun c = new ClusterRun("restore", 2000, restoreKeyed);
        ClusterRun blt = new ClusterRun("restore-blt", 2000, restoreBlt)) {
      c.sendRound(1);
      blt.sendRound(1);
      c.sendRound(2);
      blt.sendRound(2);
      String older = cluster.savepoint(c.flinkJob, false); // round 2 open
      String olderBlt = cluster.savepoint(blt.flinkJob, false);
      c.sendRound(3);
      blt.sendRound(3);
      c.sendRound(4);
      // Round 4 open, rounds 2 and 3 released since the savepoint. Cancelled and restored first,
      // so that the restored job starts inside round 4's window.
      cluster.cancel(c.flinkJob);
      // The restored job takes round 4 over with its announced window (the updates it read
      // again from the savepoint's offsets are its members).
      c.resubmit(older);
      blt.sendRound(4);
      blt.awaitCommittedModels(3);
      cluster.cancel(blt.flinkJob);
      List<LedgerEntry> charged = blt.committedLedger();
      // A BLT job's savepoint knows round 1's contributors only, not those of rounds 2 and 3.
      blt.resubmit(olderBlt);
      blt.awaitRefusal(charged.size() + " charged rounds but the state holds 1");
      c.awaitCommittedModels(4);
      c.check(4);
      blt.checkNothingMoreReleased(charged);
    }
  }

  @Test
  void stopWithSavepointThenResume_closesTheOpenRoundOnce() throws Exception {
    try (ClusterRun c = new ClusterRun("stop", 2000, stopKeyed, stopBlt, stopBand, stopStats)) {
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
    final KafkaProducer<byte[], byte[]> producer = producer(cluster.kafka());
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
      announcements = PublicTopicReader.rounds(cluster.kafka(), topics.rounds(), "read_committed");
      committedModels =
          PublicTopicReader.models(cluster.kafka(), topics.models(), "read_committed");
      uncommittedModels =
          PublicTopicReader.models(cluster.kafka(), topics.models(), "read_uncommitted");
      uncommittedRounds =
          PublicTopicReader.rounds(cluster.kafka(), topics.rounds(), "read_uncommitted");
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
      try (PublicTopicReader ledgerTopic = ledgerReader("read_committed");
          PublicTopicReader everyLedgerCopy = ledgerReader("read_uncommitted")) {
        List<LedgerEntry> ledger =
            ledgerTopic.toEnd(Duration.ofSeconds(30)).stream()
                .map(copy -> AvroCodec.decodeLedgerEntry(copy.value()))
                .toList();
        List<LedgerEntry> everyEntry =
            everyLedgerCopy.toEnd(Duration.ofSeconds(30)).stream()
                .map(copy -> AvroCodec.decodeLedgerEntry(copy.value()))
                .toList();
        for (int i = 0; i < jobs.size(); i++) {
          checkJob(soft, jobs.get(i), specs.get(i), rounds, ledger, everyEntry);
        }
      }
      soft.assertAll();
    }

    private void checkJob(
        SoftAssertions soft,
        TrainingJob job,
        JobSpec spec,
        long rounds,
        List<LedgerEntry> ledger,
        List<LedgerEntry> everyEntry) {
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
      String deployment = null;
      if (job.keyed()) {
        deployment = checkDeployment(soft, id, ledger, everyEntry);
        if (deployment != null) {
          checkAgainstReference(soft, spec, rounds, copies, deployment);
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
      for (LedgerEntry e : released) {
        if (spec.correlated()) {
          // The ledger sums the rounds' 1/z^2 increments: equal to the prefix's Gaussian up to
          // that sum's rounding.
          soft.assertThat(e.getEpsilonSpent())
              .as("%s round %d: epsilon spent vs one Gaussian of the prefix", id, e.getRound())
              .isCloseTo(correlatedEpsilon(spec, e.getRound()), withinPercentage(1e-10));
        } else {
          soft.assertThat(e.getEpsilonSpent())
              .as("%s round %d: epsilon spent vs the accountant", id, e.getRound())
              .isEqualTo(
                  Accountant.named(spec.privacy().accountant())
                      .epsilon(
                          PrivacyLedger.of(
                              spec.roundCharge()
                                  .event(spec.privacy().noiseMultiplier(), 1)
                                  .times(e.getRound())),
                          spec.privacy().delta())
                      .epsilon());
        }
        if (deployment != null && e.getRound() <= rounds) {
          soft.assertThat(e.getContributions())
              .as("%s round %d: contributions vs its sampling draws", id, e.getRound())
              .isEqualTo(expectedContributions(spec, deployment, e.getRound()));
        }
      }
    }

    /**
     * Every ledger entry of a keyed job, committed or aborted, by every Flink job of the scenario,
     * carries one deployment nonce, not the reference's; returns it (null if there is none).
     */
    private String checkDeployment(
        SoftAssertions soft, String id, List<LedgerEntry> ledger, List<LedgerEntry> everyEntry) {
      List<String> committed =
          ledger.stream()
              .filter(e -> e.getJobId().equals(id))
              .map(LedgerEntry::getDeployment)
              .distinct()
              .toList();
      List<String> all =
          everyEntry.stream()
              .filter(e -> e.getJobId().equals(id))
              .map(LedgerEntry::getDeployment)
              .distinct()
              .toList();
      System.out.printf(
          "fault injection %s: deployment nonces %s (reference run %s)%n",
          id, all, referenceDeployments.get(id));
      soft.assertThat(committed)
          .as("%s: the deployment nonces of its committed ledger entries", id)
          .hasSize(1)
          .allMatch(Deployment::isNonce, "32 hex digits");
      soft.assertThat(all)
          .as("%s: the deployment nonces of all its ledger entries, aborted copies included", id)
          .isEqualTo(committed);
      soft.assertThat(committed)
          .as("%s: its deployment nonce vs the reference run's (another deployment)", id)
          .doesNotContain(referenceDeployments.get(id));
      return committed.size() == 1 && Deployment.isNonce(committed.get(0))
          ? committed.get(0)
          : null;
    }

    /**
     * Rounds 0 to {@code rounds} of a keyed job against the reference run's: the difference of the
     * two models is, coordinate by coordinate, the sum over rounds of lr / m times (this run's
     * clipped sum minus the reference's, plus this run's noise minus the reference's), each run's
     * members and noise drawn with its own nonce (for a statistics job, of that round alone: its
     * release replaces the last). SGD's step moves the float32 model by lr times the average
     * computed in double, so each release rounds once: the tolerance is half an ulp of each run's
     * value per round, plus 1e-12 per round for the sums in double. A member more or less, or other
     * noise, is off by about 0.1 or more.
     */
    private void checkAgainstReference(
        SoftAssertions soft,
        JobSpec spec,
        long rounds,
        Map<Long, List<byte[]>> copies,
        String deployment) {
      String id = spec.jobId();
      JobSpec reference = referenceSpecs.get(id);
      String referenceDeployment = referenceDeployments.get(id);
      ServerOptimizer optimizer = spec.serverOptimizer();
      soft.assertThat(optimizer.kind())
          .as("%s: the server step the check below models", id)
          .isIn(ServerOptimizer.Kind.SGD, ServerOptimizer.Kind.RELEASE);
      // A statistics job's release is its round's noisy average alone: nothing accumulates.
      boolean accumulates = optimizer.kind() == ServerOptimizer.Kind.SGD;
      double lr = optimizer.learningRate();
      int m = spec.rounds().expectedClients();
      int d = spec.model().dimension();
      Map<Long, float[]> referenceModels = referenceTensors.get(id);
      float[] initial = tensorsOf(copies, 0);
      soft.assertThat(initial)
          .as("%s round 0: the initial model vs the reference run's", id)
          .isEqualTo(referenceModels.get(0L));
      double[] drift = new double[d];
      double[] tolerance = new double[d];
      double worst = 0;
      double worstTolerance = 0;
      List<String> cohorts = new ArrayList<>();
      for (long r = 1; r <= rounds; r++) {
        if (samples(spec)) {
          cohorts.add(
              sampledClients(spec, deployment, r)
                  + " vs "
                  + sampledClients(reference, referenceDeployment, r));
        }
        float[] ours = tensorsOf(copies, r);
        float[] theirs = referenceModels.get(r);
        soft.assertThat(ours).as("%s round %d: a public copy", id, r).isNotNull();
        if (ours == null) {
          return;
        }
        double[] noise = DeploymentNoise.sumNoise(spec, deployment, r);
        double[] referenceNoise = DeploymentNoise.sumNoise(reference, referenceDeployment, r);
        double[] sumDifference = sampledSumDifference(spec, deployment, referenceDeployment, r);
        List<String> off = new ArrayList<>();
        if (!accumulates) {
          Arrays.fill(drift, 0);
          Arrays.fill(tolerance, 0);
        }
        for (int i = 0; i < d; i++) {
          drift[i] += lr * ((sumDifference[i] + noise[i] - referenceNoise[i]) / m);
          tolerance[i] += (Math.ulp(ours[i]) + Math.ulp(theirs[i])) / 2 + 1e-12;
          double error = ((double) ours[i] - theirs[i]) - drift[i];
          if (Math.abs(error) > tolerance[i]) {
            off.add(
                "w[%d]: %s - %s (reference) = %s, expected %s within %s"
                    .formatted(
                        i,
                        ours[i],
                        theirs[i],
                        (double) ours[i] - theirs[i],
                        drift[i],
                        tolerance[i]));
          }
          worst = Math.max(worst, Math.abs(error));
          worstTolerance = Math.max(worstTolerance, tolerance[i]);
        }
        soft.assertThat(off)
            .as(
                "%s round %d: tensors vs the reference run's plus what the two deployments' draws"
                    + " explain",
                id, r)
            .isEmpty();
      }
      System.out.printf(
          "fault injection %s: largest deviation from the reference plus the deployments' draws"
              + " %.3g (tolerance up to %.3g); sampled clients per round here vs the reference's"
              + " %s%n",
          id, worst, worstTolerance, cohorts.isEmpty() ? "(no sampling)" : cohorts);
    }

    /** This run's committed ledger entries, as the topic holds them now. */
    List<LedgerEntry> committedLedger() {
      try (PublicTopicReader ledgerTopic = ledgerReader("read_committed")) {
        return ledgerTopic.toEnd(Duration.ofSeconds(30)).stream()
            .map(copy -> AvroCodec.decodeLedgerEntry(copy.value()))
            .toList();
      }
    }

    /**
     * The last submission fails for good (no restart) with the participation refusal, whose message
     * names the state and topics it saw: {@code saw}.
     */
    void awaitRefusal(String saw) throws Exception {
      cluster.awaitState(flinkJob, "FAILED", Duration.ofSeconds(90));
      String exceptions = cluster.exceptions(flinkJob);
      System.out.printf(
          "fault injection %s: refused as expected (%s)%n",
          jobs.stream().map(TrainingJob::jobId).toList(), saw);
      assertThat(exceptions)
          .as("the failure of Flink job %s", flinkJob)
          .contains("ParticipationsLostException")
          .contains("uses correlated noise (privacy.mechanism: " + jobs.get(0).mechanism() + ")")
          .contains("the ledger topic shows " + saw);
      flinkJob = null; // failed: nothing to cancel
    }

    /**
     * After a refused start: no public copy of a round after the ones {@code charged} released
     * (read_uncommitted, aborted copies included), one payload per round, and a ledger, committed
     * or not, that holds no entry beyond {@code charged}: the budget is untouched.
     */
    void checkNothingMoreReleased(List<LedgerEntry> charged) throws Exception {
      uncommittedModels.toEnd(Duration.ofSeconds(30));
      uncommittedRounds.toEnd(Duration.ofSeconds(30));
      long lastCharged = charged.stream().mapToLong(LedgerEntry::getRound).max().orElse(0);
      SoftAssertions soft = new SoftAssertions();
      try (PublicTopicReader everyLedgerCopy = ledgerReader("read_uncommitted")) {
        List<LedgerEntry> everyEntry =
            everyLedgerCopy.toEnd(Duration.ofSeconds(30)).stream()
                .map(copy -> AvroCodec.decodeLedgerEntry(copy.value()))
                .toList();
        for (TrainingJob job : jobs) {
          String id = job.jobId();
          soft.assertThat(
                  uncommittedModels.roundsWithTwoPayloads(id, FaultScenarios::describeModel))
              .as("%s: rounds with two different payloads on the public models topic", id)
              .isEmpty();
          soft.assertThat(uncommittedModels.copiesByRound(id).keySet())
              .as("%s: rounds on the public models topic (read_uncommitted)", id)
              .containsExactly(rangeFrom(0, lastCharged));
          soft.assertThat(
                  everyEntry.stream()
                      .filter(e -> e.getJobId().equals(id))
                      .map(LedgerEntry::getRound)
                      .distinct()
                      .toList())
              .as("%s: rounds in every ledger copy after the refusal", id)
              .containsExactly(rangeFrom(1, lastCharged));
        }
        soft.assertThat(committedLedger())
            .as("the committed ledger after the refusal")
            .isEqualTo(charged);
      }
      soft.assertAll();
    }

    private PublicTopicReader ledgerReader(String isolation) {
      return PublicTopicReader.ledger(cluster.kafka(), specs.get(0).topics().ledger(), isolation);
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

  /** The tensors of a round's first public copy, or null if there is none. */
  private static float[] tensorsOf(Map<Long, List<byte[]>> copies, long round) {
    List<byte[]> of = copies.get(round);
    return of == null || of.isEmpty()
        ? null
        : FaultScenarios.tensors(AvroCodec.decodeModel(of.get(0)));
  }

  /**
   * The clients whose round-{@code round} update a deployment's sampling draws take: every client
   * sends within the round's window, so these are its members. A job that does not sample takes the
   * first m in log order, the same in every deployment.
   */
  private static List<Integer> sampledClients(JobSpec spec, String deployment, long round) {
    List<Integer> out = new ArrayList<>();
    JobSpec.Correlated correlated = spec.privacy().correlated();
    ClientKeys keys = new ClientKeys();
    for (int c = 0; c < FaultScenarios.CLIENTS; c++) {
      String id = FaultScenarios.clientId(c);
      if (correlated != null
          && correlated.banded()
          && ClientGroups.groupOf(
                  NoiseSources.forSpec(spec, deployment),
                  spec,
                  keys.of(id),
                  correlated.minSeparation())
              != (round - 1) % correlated.minSeparation()) {
        continue; // another group's round
      }
      if (DeploymentNoise.sampled(spec, deployment, id, round)) {
        out.add(c);
      }
    }
    return out;
  }

  private static boolean samples(JobSpec spec) {
    return spec.privacy().sampling().mode().equals("server-poisson");
  }

  /**
   * A round's contributions in a deployment: its sampled clients, m for the early-close job, and
   * every client for a BLT job (no sampling, no early close, each client within its schema).
   */
  private static long expectedContributions(JobSpec spec, String deployment, long round) {
    if (samples(spec)) {
      return sampledClients(spec, deployment, round).size();
    }
    return spec.correlated() ? FaultScenarios.CLIENTS : spec.rounds().expectedClients();
  }

  /**
   * This run's clipped sum of a round minus the reference's, each over the clients its own
   * deployment's draws sampled, as the shards clip and sum them; zero for a job that samples
   * nothing (both runs take the same first m).
   */
  private static double[] sampledSumDifference(
      JobSpec spec, String deployment, String referenceDeployment, long round) {
    double[] ours =
        clippedSum(
            spec, samples(spec) ? sampledClients(spec, deployment, round) : List.of(), round);
    double[] theirs =
        clippedSum(
            spec,
            samples(spec) ? sampledClients(spec, referenceDeployment, round) : List.of(),
            round);
    double[] out = new double[ours.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = ours[i] - theirs[i];
    }
    return out;
  }

  private static double[] clippedSum(JobSpec spec, List<Integer> clients, long round) {
    ClippedSum sum = new ClippedSum(spec.clippingPolicy(), spec.model().tensorSizes());
    for (int c : clients) {
      sum.add(FaultScenarios.update(spec, round, c));
    }
    return sum.toDoubles();
  }

  /**
   * Epsilon after round {@code round} of a BLT job: one Gaussian with the prefix's noise multiplier
   * z s_n / s_t (CorrelatedNoiseAccounting).
   */
  private static double correlatedEpsilon(JobSpec spec, long round) {
    JobSpec.Correlated c = spec.privacy().correlated();
    if (c.banded()) {
      // Amplified banded MF: ceil(t / b) sampled Gaussians, the no-op rounds composing as nothing.
      AmplifiedBandMf band =
          new AmplifiedBandMf(
              spec.privacy().noiseMultiplier(),
              spec.privacy().sampling().rate(),
              spec.privacy().plannedRounds(),
              c.minSeparation());
      return Accountant.named(spec.privacy().accountant())
          .epsilon(
              PrivacyLedger.of(
                  PrivacyEvent.sampledGaussian(
                      band.noiseMultiplier(),
                      band.samplingRate(),
                      band.participationsThrough(round))),
              spec.privacy().delta())
          .epsilon();
    }
    BltPlan plan = BltPlan.of(c.schema(spec.privacy().plannedRounds()), c.strategy());
    double prefix =
        CorrelatedNoiseAccounting.prefixNoiseMultiplier(
            spec.privacy().noiseMultiplier(),
            c.plannedSensitivity(),
            plan.sensitivityOfFirstRounds(round));
    return CorrelatedNoiseAccounting.epsilon(
        Accountant.named(spec.privacy().accountant()), prefix, spec.privacy().delta());
  }

  private static Long[] rangeFrom(long first, long last) {
    Long[] out = new Long[(int) (last - first + 1)];
    for (int i = 0; i < out.length; i++) {
      out[i] = first + i;
    }
    return out;
  }
}
