package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.JobFixtures;
import dev.privagg.job.PrivaggJob;
import dev.privagg.job.PublicRounds;
import dev.privagg.job.PublicRounds.Position;
import dev.privagg.job.PublicRounds.Run;
import dev.privagg.job.PublicRounds.Verdict;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.ledger.LedgerReconciler;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Taking over an announced round, never renumbering it (the second review of ad54f76). */
class TakeOverTest {

  private static JobSpec spec(String rounds) {
    return JobFixtures.spec(
        "noiseMultiplier: 1.0\nbudgetEpsilon: .inf\nnoise: {source: seeded, seed: 7}", rounds);
  }

  /**
   * Two jobs for one id, and the spec changed between them (closeEarly on in A, off in B). A still
   * runs and releases round 3, charged under replace-one (z/2). B, defined during or after round
   * 3's window, charges round 3 (SKIPPED or taken over) under its own spec (z). B's gate then
   * counts less than what is public: the count matches, epsilon does not.
   */
  @Test
  void skippedOrTakenOverRound_isChargedAtTheAnnouncingRunsCost_notTheNewSpecs() {
    for (long bStartsAt : new long[] {2500, 3200}) {
      JobSpec specA = spec("closeEarly: true");
      JobSpec specB = spec("");
      LifecycleFakes.Store storeA = new LifecycleFakes.Store();
      LifecycleFakes.Recorder a = new LifecycleFakes.Recorder();
      RoundLifecycle runA =
          new RoundLifecycle(specA, NoiseSources.forSpec(specA), LedgerFloor.NONE);
      runA.start(storeA, 0, a);
      a.advance(runA, storeA, 1999);
      LedgerFloor floor =
          new LedgerFloor(
              storeA.progress().ledger.clone(),
              3,
              false,
              2,
              specA.initialWeights(),
              2,
              new LedgerFloor.Announced(3, 2000, 3000),
              // What the reconciler reads from the ledger: A's per-round charge.
              specA.roundCharge().event(1.0, 1));
      LifecycleFakes.Store storeB = new LifecycleFakes.Store();
      LifecycleFakes.Recorder b = new LifecycleFakes.Recorder();
      RoundLifecycle runB = new RoundLifecycle(specB, NoiseSources.forSpec(specB), floor);
      runB.start(storeB, bStartsAt, b);
      a.advance(runA, storeA, 2999); // A releases round 3 before B's first release stops it
      assertThat(a.released).containsExactly(1L, 2L, 3L);
      b.advance(runB, storeB, 6000);
      List<Long> bPublic = new ArrayList<>(b.released);
      bPublic.removeIf(r -> r <= 3);

      // What is public: A's rounds 1..3 at A's charge, then B's later rounds at B's charge.
      PrivacyEvent chargeA = specA.roundCharge().event(1.0, 1);
      PrivacyEvent chargeB = specB.roundCharge().event(1.0, 1);
      PrivacyLedger publicLedger =
          PrivacyLedger.of(chargeA.times(3)).append(chargeB.times(bPublic.size()));
      Accountant acc = Accountant.named(specB.privacy().accountant());
      double publicEps = acc.epsilon(publicLedger, 1e-5).epsilon();
      double gateEps = acc.epsilon(LedgerCodec.read(storeB.progress().ledger), 1e-5).epsilon();
      assertThat(gateEps)
          .as("B (start %d) gate epsilon vs epsilon of what is public", bStartsAt)
          .isGreaterThanOrEqualTo(publicEps);
    }
  }

  /**
   * Two jobs for one id with secure noise: A (older) and B (newer, took round r over) both compute
   * round r with other bytes; A's commits first. Both stop for good, by design: B's later rounds
   * build on its withheld round r, and A has been superseded. Nothing more is published until the
   * operator submits one job, which takes over from the topics (docs/operations.md).
   */
  @Test
  void aConflictBetweenTwoJobs_stopsBoth_andPublishesNothingMoreOfEither() {
    Run runA = new Run(1_000, "a");
    Run runB = new Run(2_000, "b");
    byte[] d2 = {2};
    byte[] a3 = {3, 'a'};
    byte[] b3 = {3, 'b'};

    Position atA = new Position(2, d2);
    atA.owner = runA.encode();
    assertThat(PublicRounds.decide(atA, runA, runA, 3, a3)).isEqualTo(Verdict.PUBLISH);
    assertThat(PublicRounds.decide(atA, runA, runB, 3, b3)).isEqualTo(Verdict.SUPERSEDED);

    Position atB = new Position(2, d2);
    atB.owner = runA.encode();
    assertThat(PublicRounds.decide(atB, runB, runA, 3, a3)).isEqualTo(Verdict.PUBLISH);
    assertThat(PublicRounds.decide(atB, runB, runB, 3, b3)).isEqualTo(Verdict.CONFLICT);
    // A fresh publisher (a third run C) withholds both: B's round 4 and A's round 4.
    Run runC = new Run(3_000, "c");
    Position atC = new Position(3, a3);
    assertThat(PublicRounds.decide(atC, runC, runB, 3, b3)).isEqualTo(Verdict.CONFLICT);
    assertThat(PublicRounds.decide(atC, runC, runB, 4, new byte[] {4, 'b'}))
        .isEqualTo(Verdict.TAINTED_RUN);
    assertThat(PublicRounds.decide(atC, runC, runA, 4, new byte[] {4, 'a'}))
        .isEqualTo(Verdict.OLDER_RUN);
  }

  /**
   * The round-0 model is public; a fresh start that takes round 1 over must train on it. With a
   * changed init (seed) the new run keeps its own initial weights (floor.modelRound() 0 is not
   * greater than the fresh progress's 0), so round 1 is released on top of weights never public.
   */
  @Test
  void takingRoundOneOver_buildsOnThePublicRoundZeroModel_notOnTheNewSpecsInitialWeights() {
    JobSpec specOld = randomInit(1);
    JobSpec specNew = randomInit(2);
    float[] publicRoundZero = specOld.initialWeights();
    assertThat(specNew.initialWeights()).isNotEqualTo(publicRoundZero);
    LedgerFloor floor =
        new LedgerFloor(
            LedgerCodec.write(PrivacyLedger.EMPTY),
            1,
            false,
            0,
            publicRoundZero.clone(),
            0,
            new LedgerFloor.Announced(1, 0, 1000),
            null);
    LifecycleFakes.Store store = new LifecycleFakes.Store();
    LifecycleFakes.Recorder out =
        LifecycleFakes.Recorder.releasing(specNew, NoiseSources.forSpec(specNew), floor);
    RoundLifecycle run = new RoundLifecycle(specNew, NoiseSources.forSpec(specNew), floor);
    run.start(store, 500, out);
    assertThat(out.announced).containsExactly("1 until 1000");
    out.advance(run, store, 999);
    assertThat(out.released).containsExactly(1L);
    // No update and no noise: round 1's model equals its base, the public round-0 model.
    assertThat(out.models.get(0)).containsExactly(publicRoundZero);
  }

  /**
   * PrivaggJob decides whether the source reads from the open round's opening with the submitting
   * machine's clock; RoundLifecycle decides whether to take the round over with the TaskManager's
   * (later, or skewed) clock. When they disagree near the deadline, the round is taken over but the
   * source started after its opening: updates in [opened, start - 5 s) are never read.
   */
  @Test
  void theSourceStartsAtTheOpening_wheneverTheLifecycleTakesTheRoundOver() {
    long now = System.currentTimeMillis();
    long opened = now - 60_000;
    long deadline = now - 1; // just passed by the submitting machine's clock
    LedgerFloor floor =
        new LedgerFloor(
            LedgerCodec.write(PrivacyLedger.EMPTY),
            1,
            false,
            0,
            null,
            0,
            new LedgerFloor.Announced(1, opened, deadline),
            null);
    // As PrivaggJob.define does: read the topics, decide, then define the source from that.
    LedgerReconciler.Reconciled reconciled =
        new LedgerReconciler.Reconciled(Map.of(JobFixtures.JOB, floor), Long.MIN_VALUE)
            .decidedAt(now);
    long sourceFrom = PrivaggJob.firstUpdateMillis(reconciled, now - 5_000);
    floor = reconciled.floors().get(JobFixtures.JOB);
    JobSpec spec = spec("");
    LifecycleFakes.Store store = new LifecycleFakes.Store();
    LifecycleFakes.Recorder out = new LifecycleFakes.Recorder();
    RoundLifecycle run = new RoundLifecycle(spec, NoiseSources.forSpec(spec), floor);
    run.start(store, deadline - 50, out); // the TaskManager's clock, 51 ms behind
    boolean tookOver = out.announced.contains("1 until " + deadline);
    assertThat(tookOver && sourceFrom > opened)
        .as("took over: %s; source from %d, round opened at %d", tookOver, sourceFrom, opened)
        .isFalse();
  }

  private static JobSpec randomInit(long seed) {
    return JobSpecReader.parse(
        "fixture",
        """
        jobId: %s
        model:
          init: random
          initSeed: %d
          initStd: 0.5
          tensors:
            - {name: w, shape: [2]}
            - {name: b, shape: [1]}
        rounds:
          timeout: 1000ms
          startGrace: 0ms
          expectedClients: 2
        privacy:
          clipNorm: 1.0
          delta: 1.0e-5
          noiseMultiplier: 0
          budgetEpsilon: .inf
        """
            .formatted(JobFixtures.JOB, seed));
  }
}
