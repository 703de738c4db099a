package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.exactSpec;
import static dev.privagg.job.JobFixtures.readFrom;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.ClosedRound;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.BudgetStatus;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import org.junit.jupiter.api.Test;

/**
 * The round rules of {@link RoundLifecycle}, without Flink: membership by broker timestamp, ties by
 * (partition, offset), whatever order the updates are read in (design.md invariant 10).
 */
class RoundLifecycleTest {
  private final LifecycleDriver driver = LifecycleDriver.recording();
  private final LifecycleFakes.Store store = driver.store;
  private final LifecycleFakes.Recorder decided = driver.decided;

  private void start(JobSpec spec, long nowMillis) {
    start(spec, LedgerFloor.NONE, nowMillis);
  }

  private void start(JobSpec spec, LedgerFloor floor, long nowMillis) {
    driver.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), floor), nowMillis);
  }

  private void read(DecodedUpdate update, long appended) {
    driver.read(update, appended);
  }

  private void advanceTo(long time) {
    driver.advanceTo(time);
  }

  @Test
  void updateForTheNextRound_readBeforeTheDeadlinePasses_isHeldThenAdmittedToIt() {
    start(exactSpec(""), 0);
    advanceTo(900);
    // Stamped after round 1's deadline, but read while event time is still in round 1 (another
    // partition lags): the update waits instead of being rejected FUTURE_ROUND.
    read(update("early-bird", 2, 0.1f, 0f, 0f), TIMEOUT + 10);
    assertThat(decided.rejects).isEmpty();
    assertThat(decided.admitted).isEmpty();
    assertThat(store.held.values()).hasSize(1);

    advanceTo(TIMEOUT + 10);
    assertThat(decided.rejects).isEmpty();
    assertThat(decided.admitted).containsExactly("early-bird");
    assertThat(store.held).isEmpty();
    advanceTo(2 * TIMEOUT);
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(0L, 1L);
  }

  /**
   * rounds.startAt ahead of the first start: round 0's model is out, but no round is announced or
   * charged until the start; an update before it is FUTURE_ROUND naming the start; round 1 then
   * opens at the start exactly, with the start grace.
   */
  @Test
  void aScheduledStart_opensRoundOneThere_andNothingBefore() {
    long startAt = java.time.Instant.parse("2030-01-01T00:00:00Z").toEpochMilli();
    JobSpec spec =
        spec(
            "noiseMultiplier: 0\nbudgetEpsilon: .inf",
            "startAt: '2030-01-01T00:00:00Z'\nstartGrace: 300ms");
    start(spec, startAt - 60_000);
    assertThat(decided.initialModels).isEqualTo(1);
    assertThat(decided.announced).isEmpty();
    read(update("too-early", 1, 0.1f, 0f, 0f), startAt - 10);
    advanceTo(startAt - 2);
    assertThat(decided.rejects).containsExactly("too-early FUTURE_ROUND");
    assertThat(decided.rejectDetails.get(0))
        .contains("rounds start at 2030-01-01T00:00:00Z (rounds.startAt)");
    assertThat(decided.announced).isEmpty();
    assertThat(decided.closed).isEmpty();

    advanceTo(startAt - 1);
    assertThat(decided.announced).containsExactly("1 until " + (startAt + TIMEOUT + 300));
    read(update("on-time", 1, 0.1f, 0f, 0f), startAt);
    advanceTo(startAt + TIMEOUT + 300);
    assertThat(decided.admitted).containsExactly("on-time");
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(1L);
  }

  /**
   * A job still waiting for its start, restarted with another rounds.startAt, waits for the new
   * one; restarted after its start passed while it was down, it opens round 1 at the restart rather
   * than in the past.
   */
  @Test
  void aWaitingJobRestarted_takesTheSpecsStartTime_andNeverOpensRoundOneInThePast() {
    long first = java.time.Instant.parse("2030-01-01T00:00:00Z").toEpochMilli();
    long later = first + 30_000;
    String rounds = "startGrace: 300ms\nstartAt: ";
    JobSpec early =
        spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", rounds + "2030-01-01T00:00:00Z");
    JobSpec moved =
        spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", rounds + "2030-01-01T00:00:30Z");
    start(early, first - 60_000);
    start(moved, first - 50_000);
    advanceTo(first);
    assertThat(decided.announced).as("the old start time no longer opens it").isEmpty();
    advanceTo(later - 1);
    assertThat(decided.announced).containsExactly("1 until " + (later + TIMEOUT + 300));

    LifecycleDriver down = LifecycleDriver.recording();
    down.start(new RoundLifecycle(moved, NoiseSources.forSpec(moved), LedgerFloor.NONE), first);
    long restart = later + 600_000; // down across the start time for ten minutes
    down.start(new RoundLifecycle(moved, NoiseSources.forSpec(moved), LedgerFloor.NONE), restart);
    down.advanceTo(restart);
    assertThat(down.decided.announced).containsExactly("1 until " + (restart + TIMEOUT + 300));
    assertThat(down.decided.closed).isEmpty();
  }

  @Test
  void aStartAtThatPassed_opensRoundOneAtTheFirstStart() {
    long startAt = java.time.Instant.parse("2030-01-01T00:00:00Z").toEpochMilli();
    JobSpec spec =
        spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", "startAt: '2030-01-01T00:00:00Z'");
    start(spec, startAt + 5_000);
    assertThat(decided.announced).hasSize(1);
  }

  @Test
  void updateStampedBeforeItsRoundOpened_isFutureRound_evenIfDecidedLater() {
    start(exactSpec(""), 0);
    read(update("eager", 2, 0.1f, 0f, 0f), 500); // round 2 opens at 1000
    advanceTo(2 * TIMEOUT);
    assertThat(decided.rejects).containsExactly("eager FUTURE_ROUND");
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(0L, 0L);
  }

  /**
   * What an earlier run left: round 0's model, round 1 announced for [100, 1100), nothing charged.
   */
  private static LedgerFloor announcedOnly(JobSpec spec) {
    return new LedgerFloor(
        LedgerCodec.write(PrivacyLedger.EMPTY),
        1,
        false,
        0,
        spec.initialWeights(),
        0,
        new LedgerFloor.Announced(1, 100, 1100),
        null);
  }

  @Test
  void freshStartWhileAnAnnouncedRoundIsOpen_takesItOverWithTheSameWindow() {
    JobSpec spec = exactSpec("");
    start(spec, announcedOnly(spec), 600);
    // The same announcement again (the same bytes), not a second one with another deadline.
    assertThat(decided.initialModels).isZero();
    assertThat(decided.announced).containsExactly("1 until 1100");
    assertThat(decided.skipped).isEmpty();
    read(update("before", 1, 0.1f, 0f, 0f), 99);
    read(update("in-window", 1, 0.1f, 0f, 0f), 150);
    advanceTo(1100);
    assertThat(decided.rejects).containsExactly("before FUTURE_ROUND");
    assertThat(decided.closed).extracting(ClosedRound::round).containsExactly(1L);
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(1L);
  }

  /**
   * A fresh start whose budget cannot pay for the round an earlier run announced: the budget-spent
   * record names the round after it, never the public round 1 (whose bytes it would contradict).
   */
  @Test
  void freshStartThatCannotPayForTheAnnouncedRound_saysSoAfterIt() {
    JobSpec spec = spec("noiseMultiplier: 0.1\nbudgetEpsilon: 0.01", "");
    start(spec, announcedOnly(spec), 600);
    assertThat(decided.exhausted).containsExactly(1L);
    assertThat(decided.firstUnopenedRounds).containsExactly(2L);
    assertThat(decided.announced).isEmpty();
  }

  @Test
  void freshStartAfterAnAnnouncedRoundsDeadline_chargesItAsSkipped_andOpensTheNext() {
    JobSpec spec = exactSpec("");
    start(spec, announcedOnly(spec), 5_000);
    // Round 1 is public with the earlier run's deadline, and that run may still release it.
    assertThat(decided.initialModels).isZero();
    assertThat(decided.skipped).containsExactly(1L);
    assertThat(decided.announced).containsExactly("2 until " + (5_000 + TIMEOUT));
    assertThat(LedgerCodec.read(store.progress().ledger).totalCount()).isEqualTo(1);
  }

  @Test
  void restoredOpenRoundThatALaterRunSuperseded_isDiscarded_soItsShardsLetGoOfItsSums() {
    JobSpec spec = exactSpec("");
    start(spec, 0);
    read(update("member", 1, 0.1f, 0f, 0f), 500);
    advanceTo(500);
    assertThat(decided.admitted).containsExactly("member");
    // Restored from that state; a later run announced round 3 since: round 1 is not taken over.
    driver.start(
        new RoundLifecycle(
            spec,
            NoiseSources.forSpec(spec),
            new LedgerFloor(
                store.progress().ledger.clone(),
                3,
                false,
                0,
                spec.initialWeights(),
                0,
                new LedgerFloor.Announced(3, 2 * TIMEOUT, 3 * TIMEOUT),
                null)),
        600);
    assertThat(decided.discarded).containsExactly(1L);
    assertThat(decided.closed).isEmpty();
  }

  @Test
  void restoredStateHoldingTheAnnouncedRound_keepsItsMembers_whenTheLedgerIsAhead() {
    JobSpec spec = exactSpec("");
    start(spec, 0);
    advanceTo(2 * TIMEOUT - 1); // rounds 1 and 2 closed, round 3 open for [2000, 3000)
    read(update("member", 3, 0.1f, 0f, 0f), 2 * TIMEOUT + 500);
    advanceTo(2 * TIMEOUT + 500);
    assertThat(decided.admitted).containsExactly("member");
    // Restored from that state; the ledger topic shows one charge more (another job's).
    PrivacyLedger ahead =
        LedgerCodec.read(store.progress().ledger)
            .append(spec.roundCharge().event(spec.privacy().noiseMultiplier(), 1));
    driver.start(
        new RoundLifecycle(
            spec,
            NoiseSources.forSpec(spec),
            new LedgerFloor(
                LedgerCodec.write(ahead),
                3,
                false,
                2,
                spec.initialWeights(),
                2,
                new LedgerFloor.Announced(3, 2 * TIMEOUT, 3 * TIMEOUT),
                null)),
        2 * TIMEOUT + 600);
    advanceTo(3 * TIMEOUT);
    assertThat(decided.closed).extracting(ClosedRound::round).containsExactly(1L, 2L, 3L);
    assertThat(decided.closed.get(2).contributions()).isEqualTo(1);
    assertThat(LedgerCodec.read(store.progress().ledger).totalCount()).isEqualTo(4);
  }

  @Test
  void firstRound_opensAtTheSubmission_soUpdatesSentWhileTheJobStartedBelongToIt() {
    JobSpec spec = exactSpec("");
    driver.start(
        new RoundLifecycle(
            spec, NoiseSources.forSpec(spec), LedgerFloor.NONE, 3_000, new ShardPlan(1)),
        5_000); // the job came up 2 s after it was submitted
    assertThat(decided.announced).containsExactly("1 until " + (5_000 + TIMEOUT));
    read(update("early", 1, 0.1f, 0f, 0f), 3_500);
    read(update("before-submit", 1, 0.1f, 0f, 0f), 2_999);
    advanceTo(5_000 + TIMEOUT);
    assertThat(decided.admitted).containsExactly("early");
    assertThat(decided.rejects).containsExactly("before-submit FUTURE_ROUND");
  }

  @Test
  void firstRound_takesNothingStampedBeforeTheJobOpenedIt() {
    start(exactSpec(""), 100); // round 1 is [100, 1100)
    read(update("before", 1, 0.1f, 0f, 0f), 99);
    read(update("after", 1, 0.1f, 0f, 0f), 100);
    advanceTo(100);
    assertThat(decided.rejects).containsExactly("before FUTURE_ROUND");
    assertThat(decided.admitted).containsExactly("after");
  }

  @Test
  void updateStampedAtTheDeadline_isStale_evenIfReadBeforeTheRoundCloses() {
    start(exactSpec(""), 0);
    read(update("late", 1, 0.5f, 0f, 0f), TIMEOUT);
    read(update("in-time", 1, 0.5f, 0f, 0f), TIMEOUT - 1);
    advanceTo(TIMEOUT);
    assertThat(decided.admitted).containsExactly("in-time");
    assertThat(decided.rejects).containsExactly("late STALE_ROUND");
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(1L);
  }

  @Test
  void
      earlyClose_takesTheFirstMByTimestampPartitionOffset_andTheNextRoundStillOpensAtTheDeadline() {
    start(exactSpec("closeEarly: true"), 0); // m = 2
    // Read in an order that is not the log's: by (timestamp, partition, offset) the first two are
    // b (3, p0, o9) and d (3, p0, o10); a (3, p1, o7) comes third, c (5) last.
    read(readFrom(1, 0, update("c", 1, 0.1f, 0f, 0f)), 5);
    read(readFrom(0, 10, update("d", 1, 0.1f, 0f, 0f)), 3);
    read(readFrom(1, 7, update("a", 1, 0.1f, 0f, 0f)), 3);
    read(readFrom(1, 8, update("e", 2, 0.1f, 0f, 0f)), 3); // for round 2, before it opens
    read(readFrom(0, 9, update("b", 1, 0.1f, 0f, 0f)), 3);
    read(readFrom(0, 11, update("f", 2, 0.1f, 0f, 0f)), TIMEOUT); // round 2's first instant
    advanceTo(TIMEOUT);
    assertThat(decided.admitted).containsExactly("b", "d", "f");
    assertThat(decided.rejects).containsExactly("a STALE_ROUND", "e FUTURE_ROUND", "c STALE_ROUND");
    assertThat(decided.closed)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.closedAtMillis()).isEqualTo(3);
              assertThat(r.contributions()).isEqualTo(2);
            });
    // Released at the m-th update, but round 2 is announced at round 1's deadline for [1000,
    // 2000), as without early close.
    assertThat(decided.announced).containsExactly("1 until 1000", "2 until 2000");
    assertThat(decided.timers).containsExactly(1999L);
  }

  @Test
  void earlyClose_announcesTheNextRoundOnlyAtTheDeadline_andKeepsItsWindowAcrossARestore() {
    JobSpec spec = exactSpec("closeEarly: true");
    start(spec, 0);
    read(update("a", 1, 0.1f, 0f, 0f), 10);
    read(update("b", 1, 0.1f, 0f, 0f), 20);
    advanceTo(500);
    assertThat(decided.released).containsExactly(1L);
    assertThat(decided.announced).containsExactly("1 until 1000");
    assertThat(decided.timers).as("round 1's deadline still opens round 2").containsExactly(999L);
    // A restore between the early close and the deadline (a new lifecycle on the saved state).
    driver.lifecycle = new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE);
    decided.timers.clear();
    driver.lifecycle.keepAlive(store, decided);
    read(update("c", 2, 0.1f, 0f, 0f), 600);
    advanceTo(TIMEOUT + 100);
    read(update("d", 2, 0.1f, 0f, 0f), TIMEOUT + 100);
    advanceTo(2 * TIMEOUT);
    assertThat(decided.rejects).containsExactly("c FUTURE_ROUND");
    assertThat(decided.announced).containsExactly("1 until 1000", "2 until 2000", "3 until 3000");
    assertThat(decided.closed).extracting(ClosedRound::round).containsExactly(1L, 2L);
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(2L, 1L);
    assertThat(LedgerCodec.read(store.progress().ledger).totalCount()).isEqualTo(2);
  }

  /**
   * A fresh start after an earlier run closed round 1 early, before round 1's deadline: round 2
   * must still open at that deadline, or the restart would show (and act on) whether round 1 closed
   * early.
   */
  @Test
  void earlyClose_freshStartBeforeTheClosedRoundsDeadline_opensTheNextRoundAtThatDeadline() {
    JobSpec spec = exactSpec("closeEarly: true");
    LedgerFloor closedEarly =
        new LedgerFloor(
            LedgerCodec.write(PrivacyLedger.of(spec.roundCharge().event(0, 1))),
            1,
            false,
            1,
            spec.initialWeights(),
            1,
            new LedgerFloor.Announced(1, 0, TIMEOUT),
            spec.roundCharge().event(0, 1));
    start(spec, closedEarly, 400);
    read(update("early", 2, 0.1f, 0f, 0f), 500);
    advanceTo(TIMEOUT + 10);
    read(update("in-window", 2, 0.1f, 0f, 0f), TIMEOUT + 10);
    advanceTo(2 * TIMEOUT);
    assertThat(decided.skipped).isEmpty();
    assertThat(decided.announced).containsExactly("2 until 2000", "3 until 3000");
    assertThat(decided.rejects).containsExactly("early FUTURE_ROUND");
    assertThat(decided.closed).extracting(ClosedRound::round).containsExactly(2L);
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(1L);
  }

  @Test
  void nextRoundAtEarlyClose_aNonPrivateRun_opensTheNextRoundAtTheMthUpdate() {
    start(exactSpec("closeEarly: true\nnextRoundAtEarlyClose: true"), 0);
    read(update("a", 1, 0.1f, 0f, 0f), 3);
    read(update("b", 1, 0.1f, 0f, 0f), 4);
    read(update("c", 2, 0.1f, 0f, 0f), 5);
    advanceTo(5);
    assertThat(decided.admitted).containsExactly("a", "b", "c");
    assertThat(decided.announced).containsExactly("1 until 1000", "2 until 1004");
  }

  /**
   * Early close must not let one client move a later round's window (issue: with round r + 1
   * opening at r's m-th update, x's timing decided which round-2 updates counted). Round 1's update
   * of x is sent early, late, or not at all; every later round must take the same members.
   */
  @Test
  void earlyClose_oneUpdateOfRoundOneChanged_everyLaterRoundHasTheSameMembers() {
    java.util.Map<Long, java.util.List<String>> withEarlyX = laterMembers(100L);
    assertThat(withEarlyX.keySet()).containsExactly(2L, 3L, 4L, 5L);
    assertThat(withEarlyX.values()).allSatisfy(members -> assertThat(members).hasSize(2));
    for (Long xAt : new Long[] {null, 500L, 900L}) {
      assertThat(laterMembers(xAt)).as("x stamped at %s", xAt).isEqualTo(withEarlyX);
    }
  }

  /**
   * Round 1 gets y at 300 and z at 700, plus x at {@code xAt} (null: x sends nothing); every 50 ms
   * from 0 to 5 s a client claims each of rounds 2 to 5. The admitted members of rounds 2 to 5.
   */
  private java.util.Map<Long, java.util.List<String>> laterMembers(Long xAt) {
    RoundLifecycleTest world = new RoundLifecycleTest();
    world.start(exactSpec("closeEarly: true"), 0); // m = 2
    long offset = 0;
    if (xAt != null) {
      world.read(readFrom(0, offset++, update("x", 1, 0.1f, 0f, 0f)), xAt);
    }
    world.read(readFrom(0, offset++, update("y", 1, 0.1f, 0f, 0f)), 300);
    world.read(readFrom(0, offset++, update("z", 1, 0.1f, 0f, 0f)), 700);
    for (long t = 0; t < 5 * TIMEOUT; t += 50) {
      for (long round = 2; round <= 5; round++) {
        world.read(readFrom(1, offset++, update("r" + round + "@" + t, round, 0.1f, 0f, 0f)), t);
      }
    }
    world.advanceTo(6 * TIMEOUT);
    java.util.Map<Long, java.util.List<String>> members = new java.util.TreeMap<>();
    for (String client : world.decided.admitted) {
      if (client.startsWith("r")) {
        long round = Long.parseLong(client.substring(1, client.indexOf('@')));
        members.computeIfAbsent(round, r -> new java.util.ArrayList<>()).add(client);
      }
    }
    return members;
  }

  @Test
  void duplicateClientIds_theFirstInLogOrderWins() {
    start(exactSpec(""), 0);
    read(readFrom(1, 1, update("a", 1, 0.9f, 0f, 0f)), 7); // read first, but later in the log
    read(readFrom(0, 5, update("a", 1, 0.1f, 0f, 0f)), 7);
    read(readFrom(1, 0, update("b", 1, 0.9f, 0f, 0f)), 8);
    read(readFrom(0, 4, update("b", 1, 0.1f, 0f, 0f)), 6); // an earlier timestamp wins
    advanceTo(TIMEOUT);
    assertThat(decided.admittedFrom).containsExactly("b@0/4", "a@0/5");
    assertThat(decided.rejectedFrom).containsExactly("a@1/1", "b@1/0");
    assertThat(decided.rejects).containsOnly("a DUPLICATE_CLIENT", "b DUPLICATE_CLIENT");
  }

  @Test
  void fullRound_theFirstInLogOrderGetTheRoom() {
    start(exactSpec("maxClients: 2"), 0);
    read(readFrom(2, 0, update("p2", 1, 0.1f, 0f, 0f)), 4);
    read(readFrom(1, 0, update("p1", 1, 0.1f, 0f, 0f)), 4);
    read(readFrom(0, 0, update("p0", 1, 0.1f, 0f, 0f)), 4);
    advanceTo(TIMEOUT);
    assertThat(decided.admitted).containsExactly("p0", "p1");
    assertThat(decided.rejects).containsExactly("p2 ROUND_FULL");
    assertThat(decided.full).containsExactly(1L);
  }

  @Test
  void eventTimeJumpingOverDeadlines_closesEachRoundInTurn_laterOnesWithNoiseOnly() {
    start(exactSpec(""), 0);
    read(update("c1", 1, 0.1f, 0f, 0f), 10);
    advanceTo(10);
    // One timer far ahead (its own deadline timers missed, as after a restore from a drain).
    decided.timers.clear();
    driver.lifecycle.eventTimeReached(store, 3 * TIMEOUT + 500, false, 0, decided);
    assertThat(decided.closed).extracting(ClosedRound::round).containsExactly(1L, 2L, 3L);
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(1L, 0L, 0L);
    assertThat(decided.closed)
        .extracting(ClosedRound::closedAtMillis)
        .containsExactly(TIMEOUT, 2 * TIMEOUT, 3 * TIMEOUT);
    assertThat(decided.released).containsExactly(1L, 2L, 3L);
    assertThat(decided.announced).endsWith("4 until 4000");
    assertThat(decided.timers).as("only the open round's deadline").containsExactly(3999L);
  }

  @Test
  void budgetRunsOut_exhaustsOnce_thenRejectsEveryUpdate() {
    JobSpec spec =
        spec("noiseMultiplier: 2.0\nbudgetEpsilon: 6\nnoise: {source: seeded, seed: 5}", "");
    long fit =
        BudgetStatus.of(
                Accountant.named("rdp"),
                PrivacyLedger.EMPTY,
                6,
                1e-5,
                spec.roundCharge().event(2.0, 1))
            .roundsRemaining();
    start(spec, 0);
    advanceTo(fit * TIMEOUT);
    assertThat(decided.released).hasSize((int) fit);
    assertThat(decided.exhausted).containsExactly(fit + 1);
    assertThat(decided.timers).isEmpty();
    assertThat(store.round).isNull();

    read(update("c1", fit + 1, 0f, 0f, 0f), fit * TIMEOUT + 5);
    advanceTo(fit * TIMEOUT + 5);
    assertThat(decided.rejects).containsExactly("c1 BUDGET_EXHAUSTED");
    assertThat(decided.exhausted).hasSize(1);
  }

  @Test
  void drain_decidesNothing_keepsTheHeldUpdates_andAKeepAliveRearmsTheirTimers() {
    start(exactSpec(""), 0);
    read(update("c1", 1, 0.1f, 0f, 0f), 5);
    read(update("c2", 2, 0.1f, 0f, 0f), TIMEOUT + 5);
    // The drain's maximum watermark fires every timer at once.
    for (long timer : decided.timers) {
      driver.lifecycle.eventTimeReached(store, timer, true, 0, decided);
    }
    decided.timers.clear();
    assertThat(decided.admitted).isEmpty();
    assertThat(decided.rejects).isEmpty();
    assertThat(decided.closed).isEmpty();
    assertThat(decided.drained).containsExactly(1L);
    assertThat(store.held.keySet()).containsExactly(5L, TIMEOUT + 5);

    // Restored from the drain's savepoint: a new instance, and a heartbeat's keep-alive.
    driver.lifecycle =
        new RoundLifecycle(exactSpec(""), NoiseSources.forSpec(exactSpec("")), LedgerFloor.NONE);
    driver.lifecycle.keepAlive(store, decided);
    assertThat(decided.timers).containsExactly(5L, TIMEOUT - 1, TIMEOUT + 5);
    advanceTo(TIMEOUT + 5);
    assertThat(decided.admitted).containsExactly("c1", "c2");
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(1L);
  }

  @Test
  void updateTheWatermarkAlreadyPassed_isDecidedAtOnce() {
    start(exactSpec(""), 0);
    advanceTo(TIMEOUT + 50);
    read(update("stepped-back", 1, 0.1f, 0f, 0f), 40); // the broker's clock stepped back
    assertThat(decided.rejects).containsExactly("stepped-back STALE_ROUND");
    assertThat(store.held).isEmpty();
  }

  @Test
  void minimumCohortNotReached_chargesButWithholds_andTheNextRoundTrainsOnTheOldModel() {
    start(
        spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 1000\nnoise: {source: seeded, seed: 3}",
            "minimumCohort: {count: 4, noiseStd: 0.5}"),
        0);
    read(update("c1", 1, 0.1f, 0f, 0f), 1);
    advanceTo(TIMEOUT);
    assertThat(decided.withheld).containsExactly(1L);
    assertThat(decided.released).isEmpty();
    assertThat(decided.closed.get(0).noisyCount()).isLessThan(4.0);
    assertThat(decided.announced).containsExactly("1 until 1000", "2 until 2000");
    assertThat(store.progress.modelRound).isZero();
  }
}
