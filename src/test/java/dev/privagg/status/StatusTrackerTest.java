package dev.privagg.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.Records;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.BudgetStatus;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import org.junit.jupiter.api.Test;

/** A job's status folded from its ledger, announcements and rejects, as operators read them. */
class StatusTrackerTest {
  private static final JobSpec SPEC =
      JobFixtures.spec("noiseMultiplier: 2.0\nbudgetEpsilon: 6", "");
  private static final JobSpec OTHER =
      JobSpecReader.parse(
          "other",
          """
          jobId: other-job
          model: {tensors: [{name: w, shape: [2]}, {name: b, shape: [1]}]}
          rounds: {timeout: 1s, expectedClients: 2}
          privacy: {clipNorm: 1, delta: 1.0e-5, noiseMultiplier: 2.0, budgetEpsilon: 6}
          """);
  private static final PrivacyEvent ROUND = SPEC.roundCharge().event(2.0, 1);

  private static double epsilon(long rounds) {
    return Accountant.named("rdp").epsilon(PrivacyLedger.of(ROUND.times(rounds)), 1e-5).epsilon();
  }

  private static LedgerEntry entry(JobSpec spec, long round, LedgerOutcome outcome, long count) {
    PrivacyEvent charge = outcome == LedgerOutcome.BUDGET_EXHAUSTED ? null : ROUND;
    return AvroCodec.decodeLedgerEntry(
        Records.ledger(
                spec,
                round,
                outcome,
                charge,
                epsilon(outcome == LedgerOutcome.BUDGET_EXHAUSTED ? round - 1 : round),
                count,
                null,
                null,
                round * 1000,
                null)
            .value);
  }

  private static RoundAnnouncement announced(JobSpec spec, long round, long deadline) {
    return new RoundAnnouncement(spec.jobId(), round, round - 1, deadline, false);
  }

  private static RejectedUpdate reject(String jobId, RejectReason reason) {
    return RejectedUpdate.newBuilder()
        .setReason(reason)
        .setDetail("test")
        .setJobId(jobId)
        .setClientId("c")
        .setRound(1L)
        .setSourceTopic("privagg.updates")
        .setSourcePartition(0)
        .setSourceOffset(0)
        .setOriginalBytes(java.nio.ByteBuffer.allocate(0))
        .build();
  }

  @Test
  void rounds_areCountedByOutcome_epsilonIsTheLedgers_andTheRestFitsTheBudget() {
    StatusTracker t = new StatusTracker(SPEC);
    t.announcement(announced(SPEC, 1, 10_000));
    RoundRecord first = t.ledger(entry(SPEC, 1, LedgerOutcome.RELEASED, 3), 10_250);
    t.announcement(announced(SPEC, 2, 20_000));
    t.ledger(entry(SPEC, 2, LedgerOutcome.NOT_RELEASED_MIN_COHORT, 1), 20_100);
    t.ledger(entry(SPEC, 3, LedgerOutcome.SKIPPED, 0), 30_100);
    t.announcement(announced(SPEC, 4, 40_000));
    assertThat(first.millisAfterDeadline()).isEqualTo(250);
    assertThat(first.contributions()).isEqualTo(3);

    JobStatus s = t.snapshot();
    assertThat(s.roundsReleased()).isEqualTo(1);
    assertThat(s.roundsWithheld()).isEqualTo(1);
    assertThat(s.roundsSkipped()).isEqualTo(1);
    assertThat(s.roundsCharged()).isEqualTo(3);
    assertThat(s.epsilonSpent()).isEqualTo(epsilon(3));
    assertThat(s.epsilonRemaining()).isEqualTo(6 - epsilon(3));
    long fit =
        BudgetStatus.of(Accountant.named("rdp"), PrivacyLedger.of(ROUND.times(3)), 6, 1e-5, ROUND)
            .roundsRemaining();
    assertThat(fit).isPositive();
    assertThat(s.roundsRemaining()).isEqualTo(fit);
    assertThat(s.openRound()).isEqualTo(4);
    assertThat(s.openDeadlineMillis()).isEqualTo(40_000);
    assertThat(s.exhausted()).isFalse();
    assertThat(s.finalModelRound()).isEqualTo(1);
  }

  @Test
  void theBudgetSpentRecord_endsTheJob_namesTheFinalModel_andLeavesNoRoundOpen() {
    StatusTracker t = new StatusTracker(SPEC);
    t.announcement(announced(SPEC, 1, 10_000));
    t.ledger(entry(SPEC, 1, LedgerOutcome.RELEASED, 2), 10_100);
    t.ledger(entry(SPEC, 2, LedgerOutcome.BUDGET_EXHAUSTED, 0), 10_200);
    t.announcement(new RoundAnnouncement(SPEC.jobId(), 2L, 1L, 0L, true));
    JobStatus s = t.snapshot();
    assertThat(s.exhausted()).isTrue();
    assertThat(t.exhausted()).isTrue();
    assertThat(s.roundsRemaining()).isZero();
    assertThat(s.openRound()).isEqualTo(-1);
    assertThat(s.finalModelRound()).isEqualTo(1);
    assertThat(s.roundsCharged()).as("the exhaustion charges nothing").isEqualTo(1);
    assertThat(s.rounds())
        .extracting(RoundRecord::outcome)
        .containsExactly("RELEASED", "BUDGET_EXHAUSTED");
  }

  /**
   * A second Flink job for the job id charged the same rounds again: epsilon is the accountant's on
   * every charge (what the next start adopts), not the largest epsilon one entry states.
   */
  @Test
  void aSecondJobsChargesForTheSameRounds_countInEpsilon_andAreNamed() {
    StatusTracker t = new StatusTracker(SPEC);
    t.ledger(entry(SPEC, 1, LedgerOutcome.RELEASED, 2), 1);
    t.ledger(entry(SPEC, 1, LedgerOutcome.RELEASED, 3), 2); // the other job's entry: epsilon(1)
    t.ledger(entry(SPEC, 2, LedgerOutcome.RELEASED, 2), 3);
    JobStatus s = t.snapshot();
    assertThat(s.duplicateCharges()).isEqualTo(1);
    assertThat(s.epsilonSpent()).isEqualTo(epsilon(3)).isGreaterThan(epsilon(2));
  }

  @Test
  void anAnnouncedRound_staysOpenUntilTheLedgerDecidesIt() {
    StatusTracker t = new StatusTracker(SPEC);
    assertThat(t.snapshot().openRound()).as("nothing announced yet").isEqualTo(-1);
    t.announcement(announced(SPEC, 1, 10_000));
    assertThat(t.snapshot().openRound()).isEqualTo(1);
    t.ledger(entry(SPEC, 1, LedgerOutcome.RELEASED, 2), 10_100);
    assertThat(t.snapshot().openRound()).isEqualTo(-1);
  }

  @Test
  void otherJobsRecords_areIgnored_andRejectsAreCountedByReason() {
    StatusTracker t = new StatusTracker(SPEC);
    assertThat(t.ledger(entry(OTHER, 1, LedgerOutcome.RELEASED, 5), 1)).isNull();
    t.announcement(announced(OTHER, 7, 70_000));
    t.announcement(new RoundAnnouncement(OTHER.jobId(), 8L, 7L, 0L, true));
    t.reject(reject(OTHER.jobId(), RejectReason.STALE_ROUND));
    t.reject(reject(null, RejectReason.UNDECODABLE));
    t.reject(reject(SPEC.jobId(), RejectReason.STALE_ROUND));
    t.reject(reject(SPEC.jobId(), RejectReason.STALE_ROUND));
    t.reject(reject(SPEC.jobId(), RejectReason.DUPLICATE_CLIENT));
    JobStatus s = t.snapshot();
    assertThat(s.roundsCharged()).isZero();
    assertThat(s.openRound()).isEqualTo(-1);
    assertThat(s.exhausted()).isFalse();
    assertThat(s.epsilonSpent()).isZero();
    assertThat(s.rejects())
        .containsOnly(
            java.util.Map.entry("STALE_ROUND", 2L), java.util.Map.entry("DUPLICATE_CLIENT", 1L));
  }

  @Test
  void aLongRun_keepsTheLatestRoundsOnly() {
    StatusTracker t =
        new StatusTracker(JobFixtures.spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", ""));
    for (long r = 1; r <= 3 * StatusTracker.ROUNDS_KEPT; r++) {
      t.announcement(new RoundAnnouncement(JobFixtures.JOB, r, r - 1, r * 1000, false));
      t.ledger(
          AvroCodec.decodeLedgerEntry(
              Records.ledger(
                      JobFixtures.spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", ""),
                      r,
                      LedgerOutcome.RELEASED,
                      PrivacyEvent.noOp(1),
                      Double.POSITIVE_INFINITY,
                      1,
                      null,
                      null,
                      r,
                      null)
                  .value),
          r * 1000 + 5);
    }
    JobStatus s = t.snapshot();
    assertThat(s.rounds()).hasSize(StatusTracker.ROUNDS_KEPT);
    assertThat(s.rounds().get(0).round()).isEqualTo(2L * StatusTracker.ROUNDS_KEPT + 1);
    assertThat(s.rounds().get(StatusTracker.ROUNDS_KEPT - 1).millisAfterDeadline()).isEqualTo(5);
    assertThat(s.roundsReleased()).isEqualTo(3L * StatusTracker.ROUNDS_KEPT);
    assertThat(s.roundsRemaining()).as("an infinite budget").isEqualTo(Long.MAX_VALUE);
  }
}
