package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.announcements;
import static dev.privagg.job.JobFixtures.exactSpec;
import static dev.privagg.job.JobFixtures.ledger;
import static dev.privagg.job.JobFixtures.models;
import static dev.privagg.job.JobFixtures.readFrom;
import static dev.privagg.job.JobFixtures.rejects;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.job.decide.DecideFunction;
import dev.privagg.job.decode.UpdateValidator;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.BudgetStatus;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DecideFunctionTest {
  private java.util.Map<String, LedgerFloor> floors = java.util.Map.of();
  private RoundsHarness harness;

  private void start(JobSpec spec, RoundsHarness.Snapshot restoreFrom) throws Exception {
    start(new DecideFunction(List.of(spec), floors), List.of(spec), restoreFrom);
  }

  private void start(
      DecideFunction aggregator, List<JobSpec> specs, RoundsHarness.Snapshot restoreFrom)
      throws Exception {
    harness = new RoundsHarness(aggregator, specs, floors);
    harness.setProcessingTime(JobFixtures.T0);
    if (restoreFrom != null) {
      harness.initializeState(restoreFrom);
    }
    harness.open();
  }

  @AfterEach
  void close() throws Exception {
    if (harness != null) {
      harness.close();
    }
  }

  /** Event time (the broker's clock) reaches {@code millis} on both inputs. */
  private void advanceTo(long millis) throws Exception {
    harness.processBothWatermarks(new org.apache.flink.streaming.api.watermark.Watermark(millis));
  }

  private List<OutboundRecord> drain() {
    List<OutboundRecord> out = new ArrayList<>(harness.extractOutputValues());
    harness.getOutput().clear();
    return out;
  }

  @Test
  void jobStart_publishesInitialModel_andAnnouncesRoundOne() throws Exception {
    start(exactSpec(""), null);
    harness.processElement2(JOB, 0);
    List<OutboundRecord> out = drain();
    assertThat(models(out))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getRound()).isZero();
              assertThat(weights(m)).containsExactly(0f, 0f, 0f);
            });
    assertThat(announcements(out))
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.getRound()).isEqualTo(1);
              assertThat(a.getBaseModelRound()).isZero();
              assertThat(a.getDeadlineMillis()).isEqualTo(TIMEOUT);
            });
    assertThat(harness.numEventTimeTimers()).isEqualTo(1);
  }

  @Test
  void roundClosesAtDeadline_releasesOneModel_dividedByM_andClearsRoundState() throws Exception {
    start(exactSpec(""), null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(update("c1", 1, 0.3f, 0.4f, 0f), 10); // norm 0.5: unclipped
    harness.processElement1(update("c2", 1, 3f, 0f, 4f), 20); // norm 5: clipped to 1
    harness.processElement1(update("c3", 1, 0f, 0f, 0f), 30); // a third client is not capped
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    assertThat(models(out))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getRound()).isEqualTo(1);
              assertThat(m.getPrivacy().getEpsilon()).isInfinite();
              float[] w = weights(m);
              // (0.3 + 0.6, 0.4 + 0, 0 + 0.8) / m=2, clipped value scaled by (1 - 2^-20).
              assertThat(w[0]).isCloseTo(0.45f, within(1e-5f));
              assertThat(w[1]).isCloseTo(0.2f, within(1e-5f));
              assertThat(w[2]).isCloseTo(0.4f, within(1e-5f));
            });
    assertThat(ledger(out))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
              assertThat(e.getContributions()).isEqualTo(3);
            });
    assertThat(announcements(out))
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.getRound()).isEqualTo(2);
              assertThat(a.getBaseModelRound()).isEqualTo(1);
            });
    assertThat(harness.numEventTimeTimers()).isEqualTo(1);
    // Seen-clients state was cleared: c1 may send again in round 2.
    harness.processElement1(update("c1", 2, 0f, 0f, 0f), TIMEOUT + 1);
    advanceTo(TIMEOUT + 1);
    assertThat(rejects(drain())).isEmpty();
  }

  @Test
  void staleFutureAndDuplicateUpdates_areRejected_andDoNotChangeTheModel() throws Exception {
    start(exactSpec(""), null);
    harness.processElement2(JOB, 0);
    harness.processElement1(readFrom(0, 40, update("c1", 1, 0.1f, 0f, 0f)), 1);
    harness.processElement1(readFrom(0, 41, update("c1", 1, 0.5f, 0f, 0f)), 2); // duplicate
    harness.processElement1(readFrom(0, 42, update("c2", 2, 0.5f, 0f, 0f)), 3); // future
    advanceTo(TIMEOUT);
    harness.processElement1(readFrom(0, 43, update("c3", 1, 0.5f, 0f, 0f)), TIMEOUT + 1); // stale
    advanceTo(TIMEOUT + 1); // updates are decided when event time reaches their broker time
    List<OutboundRecord> out = drain();
    assertThat(rejects(out))
        .extracting(r -> r.getReason())
        .containsExactly(
            RejectReason.DUPLICATE_CLIENT, RejectReason.FUTURE_ROUND, RejectReason.STALE_ROUND);
    assertThat(rejects(out)).extracting(r -> r.getSourceOffset()).containsExactly(41L, 42L, 43L);
    assertThat(rejects(out)).allSatisfy(r -> assertThat(r.getJobId()).isEqualTo(JOB));
    assertThat(weights(models(out).get(1))[0]).isCloseTo(0.05f, within(1e-6f));
  }

  @Test
  void fullRound_rejectsFurtherClients_withRoundFull_andReleasesTheOthersExactly()
      throws Exception {
    start(exactSpec("maxClients: 2"), null);
    harness.processElement2(JOB, 0);
    harness.processElement1(update("c1", 1, 0.2f, 0f, 0f), 1);
    harness.processElement1(update("c2", 1, 0.4f, 0f, 0f), 2);
    harness.processElement1(update("c3", 1, 0.9f, 0f, 0f), 3); // over capacity
    harness.processElement1(update("c1", 1, 0.9f, 0f, 0f), 4); // still a duplicate first
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    assertThat(rejects(out))
        .extracting(r -> r.getReason())
        .containsExactly(RejectReason.ROUND_FULL, RejectReason.DUPLICATE_CLIENT);
    assertThat(rejects(out).get(0).getDetail()).contains("already holds 2 clients");
    assertThat(weights(models(out).get(1))[0]).isCloseTo(0.3f, within(1e-6f));
    harness.processElement1(update("c3", 2, 0.9f, 0f, 0f), TIMEOUT + 1); // next round has room
    advanceTo(TIMEOUT + 1);
    assertThat(rejects(drain())).isEmpty();
  }

  @Test
  void drain_maximumWatermark_neitherClosesNorChargesTheOpenRound() throws Exception {
    start(exactSpec(""), null);
    harness.processElement2(JOB, 0);
    harness.processElement1(update("c1", 1, 0.2f, 0f, 0f), 1);
    drain();
    harness.processBothWatermarks(
        new org.apache.flink.streaming.api.watermark.Watermark(Long.MAX_VALUE));
    List<OutboundRecord> out = drain();
    assertThat(models(out)).isEmpty();
    assertThat(ledger(out)).isEmpty();
    assertThat(announcements(out)).isEmpty();
  }

  @Test
  void restoreFromADrainedSavepoint_closesTheOpenRound_onceAKeepAliveRearmsItsTimer()
      throws Exception {
    start(exactSpec(""), null);
    harness.processElement2(JOB, 0);
    harness.processElement1(update("c1", 1, 0.2f, 0f, 0f), 1);
    // flink stop --drain: the maximum watermark first, then the savepoint.
    harness.processBothWatermarks(
        new org.apache.flink.streaming.api.watermark.Watermark(Long.MAX_VALUE));
    drain();
    RoundsHarness.Snapshot savepoint = harness.snapshot(1, 2);
    harness.close();

    start(exactSpec(""), savepoint);
    harness.processElement1(DecodedUpdate.keepAlive(JOB), TIMEOUT + 5); // a heartbeat tick
    advanceTo(TIMEOUT + 5);
    List<OutboundRecord> out = drain();
    assertThat(models(out))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getRound()).isEqualTo(1);
              assertThat(weights(m)[0]).isCloseTo(0.1f, within(1e-6f));
            });
    assertThat(ledger(out)).singleElement().satisfies(e -> assertThat(e.getRound()).isEqualTo(1));
  }

  @Test
  void heldUpdates_surviveACheckpoint_andAreDecidedAfterTheRestore() throws Exception {
    start(exactSpec(""), null);
    harness.processElement2(JOB, 0);
    harness.processElement1(update("c1", 1, 0.2f, 0f, 0f), 10);
    harness.processElement1(update("c2", 2, 0.4f, 0f, 0f), TIMEOUT + 10); // partition 1 lags
    advanceTo(5);
    drain();
    RoundsHarness.Snapshot checkpoint = harness.snapshot(1, 5);
    harness.close();

    start(exactSpec(""), checkpoint);
    advanceTo(2 * TIMEOUT);
    List<OutboundRecord> out = drain();
    assertThat(rejects(out)).isEmpty();
    assertThat(ledger(out)).extracting(e -> e.getContributions()).containsExactly(1L, 1L);
    assertThat(weights(models(out).get(1))[0]).isCloseTo(0.3f, within(1e-6f));
    // The job's progress, its mechanism and its open round: nothing held any more.
    assertThat(harness.numKeyedStateEntries()).as("nothing held any more").isEqualTo(3);
  }

  @Test
  void megabyteClientIds_areKeptAsFixedSizeDigests_andStillCaughtAsDuplicates() throws Exception {
    start(exactSpec(""), null);
    harness.processElement2(JOB, 0);
    String longId = "x".repeat(1_000_000);
    harness.processElement1(update(longId, 1, 0.1f, 0f, 0f), 1);
    harness.processElement1(update(longId, 1, 0.1f, 0f, 0f), 2);
    harness.processElement1(update(longId + "y", 1, 0.1f, 0f, 0f), 3);
    advanceTo(3);
    assertThat(rejects(drain()))
        .extracting(r -> r.getReason())
        .containsExactly(RejectReason.DUPLICATE_CLIENT);
    long stateBytes =
        harness.snapshot(1, 5).decider().getManagedKeyedState().stream()
            .mapToLong(h -> h.getStateSize())
            .sum();
    assertThat(stateBytes).as("keyed state after two megabyte ids").isLessThan(10_000);
  }

  @Test
  void earlyClose_atM_releasesAtOnce_chargedAsReplaceOne() throws Exception {
    start(
        spec(
            "noiseMultiplier: 2.0\nbudgetEpsilon: 100\nsampling: {mode: server-poisson, rate: 1.0}\nnoise: {source: seeded, seed: 1}",
            "closeEarly: true"),
        null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(update("c1", 1, 0.1f, 0f, 0f), 1);
    harness.processElement1(update("c2", 1, 0.1f, 0f, 0f), 2);
    advanceTo(2); // the second update, decided at its broker time, closes the round long before 1 s
    List<OutboundRecord> out = drain();
    LedgerEntry entry = ledger(out).get(0);
    assertThat(entry.getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
    assertThat(entry.getAdjacency()).isEqualTo("replace-one");
    assertThat(entry.getChargedNoiseMultiplier()).isEqualTo(1.0); // z / 2
    assertThat(entry.getChargedSamplingRate()).isEqualTo(1.0); // no amplification
    assertThat(entry.getMechanismKind()).isEqualTo("GAUSSIAN");
    double expected =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(1.0, 1)), 1e-5)
            .epsilon();
    assertThat(entry.getEpsilonSpent()).isEqualTo(expected);
    // The model states what was charged: z/2, no sampling, replace-one; that reproduces epsilon.
    var statement = models(out).get(0).getPrivacy();
    assertThat(statement.getChargedNoiseMultiplier()).isEqualTo(1.0);
    assertThat(statement.getNoiseMultiplier()).isEqualTo(2.0);
    assertThat(statement.getAdjacency()).isEqualTo("replace-one");
    assertThat(
            Accountant.named(statement.getAccountant())
                .epsilon(
                    PrivacyLedger.of(
                        PrivacyEvent.sampledGaussian(
                            statement.getChargedNoiseMultiplier(), statement.getSamplingRate(), 1)),
                    statement.getDelta())
                .epsilon())
        .isEqualTo(statement.getEpsilon());
    // Round 2 opens at round 1's deadline, as without early close: announced only then.
    assertThat(announcements(out)).isEmpty();
    assertThat(harness.numEventTimeTimers()).isEqualTo(1);
    advanceTo(TIMEOUT);
    assertThat(announcements(drain()))
        .singleElement()
        .satisfies(a -> assertThat(a.getDeadlineMillis()).isEqualTo(2 * TIMEOUT));
  }

  @Test
  void minimumCohort_notReached_recordsTheRound_andReannouncesTheSameModel() throws Exception {
    start(
        spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 1000\nnoise: {source: seeded, seed: 3}",
            "minimumCohort: {count: 4, noiseStd: 0.5}"),
        null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(update("c1", 1, 0.1f, 0f, 0f), 1);
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    assertThat(models(out)).isEmpty();
    LedgerEntry entry = ledger(out).get(0);
    assertThat(entry.getOutcome()).isEqualTo(LedgerOutcome.NOT_RELEASED_MIN_COHORT);
    assertThat(entry.getNoisyCount()).isLessThan(4.0); // 1 update + N(0, 0.5^2)
    // Charged with the combined noise multiplier (1^-2 + 0.5^-2)^(-1/2), even though unreleased.
    assertThat(entry.getChargedNoiseMultiplier()).isCloseTo(1 / Math.sqrt(1 + 4), within(1e-12));
    assertThat(announcements(out))
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.getRound()).isEqualTo(2);
              assertThat(a.getBaseModelRound()).isZero();
            });
  }

  @Test
  void minimumCohort_reached_releases() throws Exception {
    start(
        spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 1000\nnoise: {source: seeded, seed: 3}",
            "minimumCohort: {count: 4, noiseStd: 0.5}"),
        null);
    harness.processElement2(JOB, 0);
    for (int c = 0; c < 8; c++) { // 8 updates against a minimum of 4: 8 std of margin
      harness.processElement1(update("c" + c, 1, 0.1f, 0f, 0f), 1 + c);
    }
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    assertThat(ledger(out))
        .singleElement()
        .satisfies(e -> assertThat(e.getOutcome()).isEqualTo(LedgerOutcome.RELEASED));
    assertThat(models(out)).hasSize(2);
  }

  /**
   * rounds.startAt through the operator: the start publishes round 0 only, the start-time timer
   * survives a snapshot and restore, and round 1 opens at the start time when event time gets
   * there.
   */
  @Test
  void scheduledStart_announcesRoundOneAtTheStartTime_acrossARestore() throws Exception {
    JobSpec spec =
        spec(
            "noiseMultiplier: 0\nbudgetEpsilon: .inf\nnoise: {source: seeded, seed: 5}",
            "startAt: 2030-01-01T00:00:00Z\nstartGrace: 0ms");
    long opens = spec.rounds().startAtMillis();
    start(spec, null);
    harness.processElement2(JOB, 0);
    List<OutboundRecord> out = drain();
    assertThat(models(out)).hasSize(1);
    assertThat(announcements(out)).isEmpty();
    advanceTo(opens - 1000);
    assertThat(announcements(drain())).isEmpty();
    RoundsHarness.Snapshot snapshot = harness.snapshot(1, opens - 1000);
    harness.close();

    start(spec, snapshot);
    advanceTo(opens - 2);
    assertThat(announcements(drain())).isEmpty();
    advanceTo(opens - 1);
    assertThat(announcements(drain()))
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.getRound()).isEqualTo(1);
              assertThat(a.getDeadlineMillis()).isEqualTo(opens + TIMEOUT);
            });
  }

  @Test
  void exhaustedBudget_publishesNothingMore_andRejectsLaterUpdates() throws Exception {
    JobSpec spec =
        spec("noiseMultiplier: 2.0\nbudgetEpsilon: 6\nnoise: {source: seeded, seed: 5}", "");
    PrivacyEvent round = spec.roundCharge().event(2.0, 1);
    long fit =
        BudgetStatus.of(Accountant.named("rdp"), PrivacyLedger.EMPTY, 6, 1e-5, round)
            .roundsRemaining();
    assertThat(fit).isBetween(2L, 20L);
    start(spec, null);
    harness.processElement2(JOB, 0);
    harness.processElement1(update("c0", 1, 0.1f, 0f, 0f), 1); // leaves round state behind
    for (long r = 1; r <= fit; r++) {
      advanceTo(r * TIMEOUT);
    }
    List<OutboundRecord> out = drain();
    assertThat(models(out)).hasSize((int) fit + 1); // round 0 plus every round that fit
    assertThat(ledger(out))
        .last()
        .satisfies(
            e -> {
              assertThat(e.getOutcome()).isEqualTo(LedgerOutcome.BUDGET_EXHAUSTED);
              assertThat(e.getEpsilonSpent()).isLessThanOrEqualTo(6.0);
            });
    // Every round that fit is announced, then one public record says the budget is spent: the
    // next round never opens and the last model is final.
    List<RoundAnnouncement> announced = announcements(out);
    assertThat(announced).hasSize((int) fit + 1);
    assertThat(announced.subList(0, (int) fit)).noneMatch(RoundAnnouncement::getBudgetSpent);
    assertThat(announced.get((int) fit))
        .satisfies(
            a -> {
              assertThat(a.getBudgetSpent()).isTrue();
              assertThat(a.getRound()).isEqualTo(fit + 1);
              assertThat(a.getBaseModelRound()).isEqualTo(fit);
              assertThat(a.getDeadlineMillis()).isZero();
            });
    assertThat(harness.numEventTimeTimers()).isZero();
    // Only the job progress (ledger, model) and its mechanism remain: round accumulator and seen
    // clients are gone.
    assertThat(harness.numKeyedStateEntries()).isEqualTo(2);
    harness.processElement1(update("c1", fit + 1, 0f, 0f, 0f), fit * TIMEOUT + 1);
    advanceTo(fit * TIMEOUT + 1);
    assertThat(rejects(drain()))
        .singleElement()
        .satisfies(r -> assertThat(r.getReason()).isEqualTo(RejectReason.BUDGET_EXHAUSTED));
  }

  @Test
  void adaptiveClipping_ledgerAndModelsCarryEachRoundsC_acrossSnapshotAndRestore()
      throws Exception {
    JobSpec spec =
        spec(
            "noiseMultiplier: 0\nbudgetEpsilon: .inf\nnoise: {source: seeded, seed: 5}\n"
                + "adaptiveClipping: {targetQuantile: 0.5, countNoiseStd: 0.1}",
            "");
    start(spec, null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(measured(update("c1", 1, 0.1f, 0f, 0f)), 10); // unclipped
    harness.processElement1(measured(update("c2", 1, 3f, 4f, 0f)), 20); // norm 5: clipped
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    LedgerEntry first = ledger(out).get(0);
    assertThat(first.getClipNorm()).isEqualTo(1.0);
    assertThat(models(out).get(0).getPrivacy().getClipNorm()).isEqualTo(1.0);
    // One of two unclipped: b = (1 - 2/2 + N(0, 0.1^2) + m/2) / m, within 5 std of 1/2.
    double fraction = first.getNoisyUnclippedFraction();
    assertThat(fraction).isCloseTo(0.5, within(5 * 0.1 / 2));
    double next = first.getNextClipNorm();
    assertThat(next).isCloseTo(Math.exp(-0.2 * (fraction - 0.5)), within(1e-12));
    float[] afterOne = weights(models(out).get(0));
    RoundsHarness.Snapshot snapshot = harness.snapshot(1, TIMEOUT);
    harness.close();

    start(spec, snapshot);
    advanceTo(TIMEOUT);
    harness.processElement1(measured(update("c2", 2, 3f, 4f, 0f)), TIMEOUT + 10);
    advanceTo(2 * TIMEOUT);
    out = drain();
    assertThat(ledger(out).get(0).getClipNorm()).isEqualTo(next);
    assertThat(models(out).get(0).getPrivacy().getClipNorm()).isEqualTo(next);
    // Round 2 clips the update to the restored C: w moves by (0.6, 0.8) * C / m.
    float[] afterTwo = weights(models(out).get(0));
    assertThat(afterTwo[0] - afterOne[0]).isCloseTo((float) (0.6 * next / 2), within(1e-5f));
    assertThat(afterTwo[1] - afterOne[1]).isCloseTo((float) (0.8 * next / 2), within(1e-5f));
  }

  @Test
  void adamMoments_surviveSnapshotAndRestore_bitForBitAsWithoutTheFailure() throws Exception {
    JobSpec spec =
        spec(
            "noiseMultiplier: 0\nbudgetEpsilon: .inf",
            "",
            "server: {optimizer: adam, learningRate: 0.1}");
    List<float[]> uninterrupted = new ArrayList<>();
    start(spec, null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(update("c1", 1, 0.3f, 0.4f, 0f), 10);
    advanceTo(TIMEOUT);
    uninterrupted.add(weights(models(drain()).get(0)));
    RoundsHarness.Snapshot snapshot = harness.snapshot(1, TIMEOUT);
    harness.processElement1(update("c1", 2, 0.3f, 0.4f, 0f), TIMEOUT + 10);
    advanceTo(2 * TIMEOUT);
    uninterrupted.add(weights(models(drain()).get(0)));
    harness.close();

    start(spec, snapshot);
    advanceTo(TIMEOUT);
    harness.processElement1(update("c1", 2, 0.3f, 0.4f, 0f), TIMEOUT + 10);
    advanceTo(2 * TIMEOUT);
    // Round 2 steps with round 1's moments from the restored state: with fresh moments m would be
    // (1 - b1) d, not b1 (1 - b1) d + (1 - b1) d, and the step another.
    assertThat(weights(models(drain()).get(0))).containsExactly(uninterrupted.get(1));
    assertThat(uninterrupted.get(1)[0] - uninterrupted.get(0)[0])
        .isNotCloseTo(uninterrupted.get(0)[0], within(1e-6f));
  }

  @Test
  void sgdStateRestoredUnderAdam_startsAdamsMomentsFresh_insteadOfFailing() throws Exception {
    JobSpec sgd = spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", "");
    JobSpec adam =
        spec(
            "noiseMultiplier: 0\nbudgetEpsilon: .inf",
            "",
            "server: {optimizer: adam, learningRate: 0.1}");
    start(sgd, null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(update("c1", 1, 0.3f, 0.4f, 0f), 10);
    advanceTo(TIMEOUT);
    float[] afterOne = weights(models(drain()).get(0));
    RoundsHarness.Snapshot snapshot = harness.snapshot(1, TIMEOUT);
    harness.close();

    start(adam, snapshot);
    advanceTo(TIMEOUT);
    harness.processElement1(update("c1", 2, 0.3f, 0.4f, 0f), TIMEOUT + 10);
    advanceTo(2 * TIMEOUT);
    float[] afterTwo = weights(models(drain()).get(0));
    // Adam's first step from m = 0, v = tau^2: lr (1 - b1) d / (sqrt(b2 tau^2 + (1 - b2) d^2) +
    // tau).
    double d = 0.3 / 2;
    double v = 0.99 * 1e-6 + 0.01 * d * d;
    assertThat((double) (afterTwo[0] - afterOne[0]))
        .isCloseTo(0.1 * 0.1 * d / (Math.sqrt(v) + 1e-3), within(1e-5));
  }

  @Test
  void restoreWithAdaptiveClippingTurnedOff_midRound_keepsTheRoundsC_forItsUnitsNoiseAndLedger()
      throws Exception {
    JobSpec adaptive =
        spec(
            "noiseMultiplier: 0\nbudgetEpsilon: .inf\nnoise: {source: seeded, seed: 5}\n"
                + "adaptiveClipping: {targetQuantile: 0.9, countNoiseStd: 0.001}",
            "");
    JobSpec fixed =
        spec("noiseMultiplier: 0\nbudgetEpsilon: .inf\nnoise: {source: seeded, seed: 5}", "");
    start(adaptive, null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(measured(update("c1", 1, 3f, 4f, 0f)), 10); // clipped: C grows
    harness.processElement1(measured(update("c2", 1, 3f, 4f, 0f)), 20);
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    double roundTwoC = ledger(out).get(0).getNextClipNorm();
    assertThat(roundTwoC).isGreaterThan(1.15);
    float[] afterOne = weights(models(out).get(0));
    // Round 2 admits an update (norm 0.5, unclipped) at its C, then the job is restored from a
    // savepoint with a spec that clips at a fixed C = 1.
    harness.processElement1(measured(update("c1", 2, 0.3f, 0.4f, 0f)), TIMEOUT + 10);
    RoundsHarness.Snapshot savepoint = harness.snapshot(1, TIMEOUT + 10);
    harness.close();

    start(fixed, savepoint);
    advanceTo(2 * TIMEOUT);
    out = drain();
    // The shard summed the member in units of round 2's C: the ledger, the model's statement and
    // the decode (and the noise) must all use that C, so the member moves w by (0.3, 0.4) / m, not
    // by (0.3, 0.4) / (C m) as a decode at the new spec's C = 1 makes it.
    assertThat(ledger(out).get(0).getClipNorm()).isEqualTo(roundTwoC);
    assertThat(models(out).get(0).getPrivacy().getClipNorm()).isEqualTo(roundTwoC);
    float[] afterTwo = weights(models(out).get(0));
    assertThat(afterTwo[0] - afterOne[0]).isCloseTo(0.15f, within(1e-5f));
    assertThat(afterTwo[1] - afterOne[1]).isCloseTo(0.2f, within(1e-5f));
    // The next round is the new spec's.
    assertThat(ledger(out).get(0).getNextClipNorm()).isNull();
  }

  @Test
  void restorePerLayerWithAnotherClipNorm_midRound_clipsSumsAndDecodesAtTheAnnouncedC()
      throws Exception {
    JobSpec announced = spec("noiseMultiplier: 0\nbudgetEpsilon: .inf\nclipping: per-layer", "");
    JobSpec changed =
        JobFixtures.spec(
            2.0, "noiseMultiplier: 0\nbudgetEpsilon: .inf\nclipping: per-layer", "", "");
    start(announced, null);
    harness.processElement2(JOB, 0);
    drain();
    // Round 1 is announced at C = 1: c1 is summed before the savepoint, c2 after a restore whose
    // spec says C = 2.
    harness.processElement1(update("c1", 1, 30f, 40f, 10f), 10);
    RoundsHarness.Snapshot savepoint = harness.snapshot(1, 10);
    harness.close();

    start(changed, savepoint);
    harness.processElement1(update("c2", 1, 30f, 40f, 10f), 20);
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    // Per-layer clipping with an equal split gives each of the two tensors C / sqrt(2) at the
    // round's C = 1: w to (0.6, 0.8) / sqrt(2), b to 1 / sqrt(2); two members over m = 2.
    float[] moved = weights(models(out).get(0));
    double layer = 1 / Math.sqrt(2);
    assertThat((double) moved[0]).isCloseTo(0.6 * layer, within(1e-5));
    assertThat((double) moved[1]).isCloseTo(0.8 * layer, within(1e-5));
    assertThat((double) moved[2]).isCloseTo(layer, within(1e-5));
    assertThat(models(out).get(0).getPrivacy().getClipNorm()).isEqualTo(1.0);
    assertThat(ledger(out).get(0).getClipNorm()).isEqualTo(1.0);
  }

  /**
   * A restore whose spec samples at a lower rate than the open round was opened with: the members
   * admitted before the savepoint were not sampled at all, so the round is charged at the rate it
   * was opened with (1), not at the restored spec's 0.5, which would understate what it releases.
   */
  @Test
  void restoreWithALowerSamplingRate_midRound_chargesTheRateTheRoundWasOpenedWith()
      throws Exception {
    String privacy = "noiseMultiplier: 1.0\nbudgetEpsilon: 100\nnoise: {source: seeded, seed: 3}";
    JobSpec announced = spec(privacy, "maxClients: 10");
    JobSpec sampled =
        spec(privacy + "\nsampling: {mode: server-poisson, rate: 0.5}", "maxClients: 10");
    start(announced, null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(update("c1", 1, 0.3f, 0.4f, 0f), 10);
    RoundsHarness.Snapshot savepoint = harness.snapshot(1, 10);
    harness.close();

    start(sampled, savepoint);
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    assertThat(ledger(out).get(0).getChargedSamplingRate()).isEqualTo(1.0);
    assertThat(models(out).get(0).getPrivacy().getEpsilon())
        .isEqualTo(
            Accountant.named(announced.privacy().accountant())
                .epsilon(
                    PrivacyLedger.of(announced.roundCharge().event(1.0, 1)),
                    announced.privacy().delta())
                .epsilon());
    // The next round opens under the restored spec and is charged at its rate.
    advanceTo(2 * TIMEOUT);
    assertThat(ledger(drain()).get(0).getChargedSamplingRate()).isEqualTo(0.5);
  }

  /**
   * A fresh start that adopts charges of another run (here two rounds at that run's replace-one
   * cost): the models' statement must reproduce their epsilon, which the spec's own per-round
   * charge times the round count would understate.
   */
  @Test
  void modelAfterAdoptingAnotherRunsCharges_statesTheChargesThatReproduceItsEpsilon()
      throws Exception {
    JobSpec spec =
        spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 100\nsampling: {mode: server-poisson, rate: 0.5}"
                + "\nnoise: {source: seeded, seed: 3}",
            "maxClients: 10");
    PrivacyEvent theirs = PrivacyEvent.gaussian(0.5, 1);
    floors =
        java.util.Map.of(
            JOB,
            new LedgerFloor(
                LedgerCodec.write(PrivacyLedger.of(theirs.times(2))),
                2,
                false,
                2,
                new float[] {0.5f, 0.5f, 0.5f},
                2,
                null,
                theirs));
    start(spec, null);
    harness.processElement2(JOB, 0);
    drain();
    advanceTo(20 * TIMEOUT);
    var statement =
        models(drain()).stream()
            .filter(m -> m.getRound() == 3)
            .findFirst()
            .orElseThrow()
            .getPrivacy();
    PrivacyEvent ours = spec.roundCharge().event(1.0, 1);
    List<PrivacyEvent> stated = new ArrayList<>();
    for (var charge : statement.getCharges()) {
      stated.add(
          new PrivacyEvent(
              dev.privagg.privacy.MechanismKind.parse(charge.getMechanismKind()),
              charge.getNoiseMultiplier(),
              charge.getSamplingRate(),
              charge.getCount()));
    }
    assertThat(stated).containsExactly(theirs.times(2), ours);
    Accountant accountant = Accountant.named(statement.getAccountant());
    assertThat(accountant.epsilon(new PrivacyLedger(stated), statement.getDelta()).epsilon())
        .isEqualTo(statement.getEpsilon());
    // The round's own charge, and what it alone would say for three rounds: less than the truth.
    assertThat(statement.getChargedNoiseMultiplier()).isEqualTo(ours.noiseMultiplier());
    assertThat(accountant.epsilon(PrivacyLedger.of(ours.times(3)), 1e-5).epsilon())
        .isLessThan(statement.getEpsilon());
  }

  /** The update with its norm, as the decoder hands it to an adaptive job's decider. */
  private static DecodedUpdate measured(DecodedUpdate update) {
    update.norm = UpdateValidator.l2Norm(update.tensorData);
    return update;
  }

  @Test
  void snapshotAndRestore_keepsTheLedgerAndModel_andIgnoresTheReplayedStart() throws Exception {
    JobSpec spec =
        spec("noiseMultiplier: 1.0\nbudgetEpsilon: 50\nnoise: {source: seeded, seed: 9}", "");
    start(spec, null);
    harness.processElement2(JOB, 0);
    harness.processElement1(update("c1", 1, 0.1f, 0f, 0f), 1);
    advanceTo(TIMEOUT);
    float[] released = weights(models(drain()).get(1));
    RoundsHarness.Snapshot snapshot = harness.snapshot(1, TIMEOUT);
    harness.close();

    start(spec, snapshot);
    advanceTo(TIMEOUT);
    harness.processElement2(JOB, TIMEOUT); // the start event again, as after a restore
    assertThat(drain()).isEmpty();
    advanceTo(2 * TIMEOUT);
    List<OutboundRecord> out = drain();
    PrivacyLedger two = PrivacyLedger.of(spec.roundCharge().event(1.0, 2));
    assertThat(ledger(out).get(0).getEpsilonSpent())
        .isEqualTo(Accountant.named("rdp").epsilon(two, 1e-5).epsilon());
    assertThat(models(out).get(0).getRound()).isEqualTo(2);
    assertThat(weights(models(out).get(0)))
        .isNotEqualTo(released); // noise moved it on from round 1
  }

  @Test
  void restoreFromAnOlderSnapshot_doesNotRollTheBudgetBack() throws Exception {
    JobSpec spec =
        spec("noiseMultiplier: 2.0\nbudgetEpsilon: 50\nnoise: {source: seeded, seed: 9}", "");
    start(spec, null);
    harness.processElement2(JOB, 0);
    advanceTo(TIMEOUT);
    RoundsHarness.Snapshot afterRoundOne = harness.snapshot(1, TIMEOUT);
    advanceTo(2 * TIMEOUT);
    advanceTo(3 * TIMEOUT);
    List<OutboundRecord> published = drain();
    harness.close();
    // What the ledger and model topics show: three released rounds.
    PrivacyEvent round = spec.roundCharge().event(2.0, 1);
    float[] roundThree = weights(models(published).get(3));
    floors =
        java.util.Map.of(
            JOB,
            new LedgerFloor(
                LedgerCodec.write(PrivacyLedger.of(round, round, round)), 3, false, 3, roundThree));

    start(spec, afterRoundOne); // the older snapshot knows only round 1
    advanceTo(4 * TIMEOUT); // its round-2 deadline fires
    List<OutboundRecord> out = drain();
    assertThat(models(out)).isEmpty(); // round 2 is not released a second time
    assertThat(announcements(out))
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.getRound()).isEqualTo(4);
              assertThat(a.getBaseModelRound()).isEqualTo(3);
            });
    long deadline = announcements(out).get(0).getDeadlineMillis();
    advanceTo(deadline);
    out = drain();
    double fourRounds =
        Accountant.named("rdp").epsilon(PrivacyLedger.of(round.times(4)), 1e-5).epsilon();
    assertThat(ledger(out).get(0).getRound()).isEqualTo(4);
    assertThat(ledger(out).get(0).getEpsilonSpent()).isEqualTo(fourRounds);
  }

  @Test
  void freshStartOfAJobThatAlreadySpent_continuesFromTheLedgerTopic() throws Exception {
    JobSpec spec =
        spec("noiseMultiplier: 2.0\nbudgetEpsilon: 50\nnoise: {source: seeded, seed: 9}", "");
    PrivacyEvent round = spec.roundCharge().event(2.0, 1);
    floors =
        java.util.Map.of(
            JOB,
            new LedgerFloor(
                LedgerCodec.write(PrivacyLedger.of(round, round)),
                2,
                false,
                2,
                new float[] {0.5f, 0.5f, 0.5f}));
    start(spec, null);
    harness.processElement2(JOB, 0);
    List<OutboundRecord> out = drain();
    assertThat(models(out)).isEmpty(); // no second "round 0"
    assertThat(announcements(out))
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.getRound()).isEqualTo(3);
              assertThat(a.getBaseModelRound()).isEqualTo(2);
            });
    advanceTo(announcements(out).get(0).getDeadlineMillis());
    out = drain();
    assertThat(ledger(out).get(0).getEpsilonSpent())
        .isEqualTo(
            Accountant.named("rdp").epsilon(PrivacyLedger.of(round.times(3)), 1e-5).epsilon());
    assertThat(models(out).get(0).getRound()).isEqualTo(3);
  }

  @Test
  void updateAppendedAtTheDeadline_isStale_andNotInTheRound() throws Exception {
    start(exactSpec(""), null);
    harness.processElement2(JOB, 0);
    drain();
    harness.processElement1(update("late", 1, 0.5f, 0f, 0f), TIMEOUT); // broker time = deadline
    assertThat(drain()).as("held until event time reaches its broker time").isEmpty();
    advanceTo(TIMEOUT);
    List<OutboundRecord> out = drain();
    assertThat(rejects(out))
        .singleElement()
        .satisfies(r -> assertThat(r.getReason()).isEqualTo(RejectReason.STALE_ROUND));
    assertThat(weights(models(out).get(0))).containsOnly(0f); // the late update is not in
  }
}
