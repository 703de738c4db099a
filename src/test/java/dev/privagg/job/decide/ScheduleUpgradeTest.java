package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.readFrom;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.InternalRelease;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.JobProgress;
import dev.privagg.job.OutboundRecord;
import dev.privagg.job.PublicRounds;
import dev.privagg.job.Records;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.ledger.LedgerReconciler;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/**
 * Upgrades from the version whose early close opened the next round at once, so that one client's
 * timing moved every later window (and still would, inherited by later rounds). Each test builds
 * two worlds that differ in one client's round-1 update under the old version (x sent at 100, or
 * not at all), upgrades them by a savepoint restore or a fresh start, and compares which clients
 * later rounds take: none of those memberships may depend on x (RoundLifecycle.reanchor, and adopt
 * taking over only windows of the fixed schedule).
 *
 * <p>Old world, m = 2, timeout 1 s: y at 300, z at 700, x at 100 or absent. With x, round 1 closes
 * at 300 and round 2 is [300, 1300); without x, round 1 closes at 700 and round 2 is [700, 1700).
 * The old version's state is produced by the chained schedule (nextRoundAtEarlyClose opens the next
 * round as the old version did) with the fields it lacked cleared.
 */
class ScheduleUpgradeTest {
  private RoundLifecycle lifecycle;
  private LifecycleFakes.Store store = new LifecycleFakes.Store();
  private LifecycleFakes.Recorder decided = new LifecycleFakes.Recorder();
  private long eventTime = Long.MIN_VALUE;
  private long offset;

  private void read(DecodedUpdate update, long appended) {
    lifecycle.arrive(store, update, appended, eventTime, 0, decided);
  }

  private void advanceTo(long time) {
    eventTime = time;
    while (!decided.timers.isEmpty() && decided.timers.first() <= time) {
      lifecycle.eventTimeReached(store, decided.timers.pollFirst(), false, 0, decided);
    }
  }

  /** The fixtures' exact spec with its own round timeout and start grace. */
  static JobSpec spec(long timeoutMillis, long graceMillis, String rounds) {
    return JobFixtures.exactSpec(timeoutMillis, graceMillis, rounds);
  }

  /** The old version's world up to event time 800 (its savepoint), fixedSchedule as it left it. */
  private static ScheduleUpgradeTest oldWorld(Long xAt) {
    ScheduleUpgradeTest world = new ScheduleUpgradeTest();
    JobSpec old = spec(1000, 0, "closeEarly: true\nnextRoundAtEarlyClose: true");
    world.lifecycle = new RoundLifecycle(old, NoiseSources.forSpec(old), LedgerFloor.NONE);
    world.lifecycle.start(world.store, 0, world.decided);
    if (xAt != null) {
      world.read(readFrom(0, world.offset++, update("x", 1, 0.1f, 0f, 0f)), xAt);
    }
    world.read(readFrom(0, world.offset++, update("y", 1, 0.1f, 0f, 0f)), 300);
    world.read(readFrom(0, world.offset++, update("z", 1, 0.1f, 0f, 0f)), 700);
    world.advanceTo(800);
    assertThat(world.store.progress().currentRound).isEqualTo(2);
    world.store.progress().fixedSchedule = false; // a field the old version did not have
    world.store.progress().reanchorMillis = 0;
    return world;
  }

  /**
   * After the upgrade: every 50 ms from {@code from} to 7 s a client claims each of rounds 3 to 6;
   * returns who each round took.
   */
  private Map<Long, List<String>> laterMembers(long from) {
    for (long t = from; t < 7_000; t += 50) {
      for (long round = 3; round <= 6; round++) {
        read(readFrom(1, offset++, update("r" + round + "@" + t, round, 0.1f, 0f, 0f)), t);
      }
    }
    advanceTo(9_000);
    Map<Long, List<String>> members = new TreeMap<>();
    for (String client : decided.admitted) {
      if (client.startsWith("r")) {
        long round = Long.parseLong(client.substring(1, client.indexOf('@')));
        members.computeIfAbsent(round, r -> new ArrayList<>()).add(client);
      }
    }
    return members;
  }

  /** A savepoint restore of the old world under {@code upgraded} at wall-clock time {@code now}. */
  private static Map<Long, List<String>> restoredUnder(JobSpec upgraded, Long xAt, long now) {
    ScheduleUpgradeTest world = oldWorld(xAt);
    world.lifecycle =
        new RoundLifecycle(upgraded, NoiseSources.forSpec(upgraded), LedgerFloor.NONE);
    world.lifecycle.start(world.store, now, world.decided);
    world.lifecycle.keepAlive(world.store, world.decided);
    return world.laterMembers(800);
  }

  /** A savepoint restore of the old world under {@code upgraded} at wall-clock time {@code now}. */
  private static ScheduleUpgradeTest restored(JobSpec upgraded, Long xAt, long now) {
    ScheduleUpgradeTest world = oldWorld(xAt);
    world.lifecycle =
        new RoundLifecycle(upgraded, NoiseSources.forSpec(upgraded), LedgerFloor.NONE);
    world.lifecycle.start(world.store, now, world.decided);
    world.lifecycle.keepAlive(world.store, world.decided);
    return world;
  }

  @Test
  void savepointRestore_sameTimeoutAndClock_laterMembersDoNotDependOnX() {
    JobSpec upgraded = spec(1000, 0, "closeEarly: true");
    Map<Long, List<String>> withX = restoredUnder(upgraded, 100L, 800);
    assertThat(withX.keySet()).containsExactly(3L, 4L, 5L, 6L);
    assertThat(restoredUnder(upgraded, null, 800)).isEqualTo(withX);
  }

  @Test
  void savepointRestore_cutsTheOpenRoundAtTheRestore_andOpensTheNextThenWithGrace() {
    JobSpec upgraded = spec(1000, 250, "closeEarly: true");
    ScheduleUpgradeTest world = restored(upgraded, null, 800); // round 2 was [700, 1700)
    world.read(readFrom(0, world.offset++, update("in-time", 2, 0.1f, 0f, 0f)), 750);
    world.read(readFrom(0, world.offset++, update("after-the-cut", 2, 0.1f, 0f, 0f)), 900);
    world.advanceTo(2_000);
    assertThat(world.decided.closed)
        .filteredOn(r -> r.round() == 2)
        .singleElement()
        .satisfies(r -> assertThat(r.contributions()).isEqualTo(1));
    assertThat(world.decided.rejects).containsExactly("after-the-cut STALE_ROUND");
    assertThat(world.decided.announced).contains("3 until 2050");
    assertThat(world.store.progress().fixedSchedule).isTrue();
  }

  /**
   * The bound of an earlier design ("restore time + timeout + grace is after the moved deadline")
   * failed when the upgrade shortened the timeout or the restoring clock lagged the broker: the
   * restore time itself is the re-anchor now, whatever the old deadline.
   */
  @Test
  void savepointRestore_withAShorterTimeoutOrALaggingClock_laterMembersDoNotDependOnX() {
    JobSpec shorter = spec(700, 0, "closeEarly: true");
    assertThat(restoredUnder(shorter, null, 800)).isEqualTo(restoredUnder(shorter, 100L, 800));
    JobSpec same = spec(1000, 0, "closeEarly: true");
    assertThat(restoredUnder(same, null, 500)).isEqualTo(restoredUnder(same, 100L, 500));
  }

  /**
   * A restore after the moved deadline passed in one world only: both open round 3 at the restore.
   */
  @Test
  void savepointRestoreAfterOneWorldsDeadline_laterMembersDoNotDependOnX() {
    JobSpec upgraded = spec(1000, 0, "closeEarly: true");
    assertThat(restoredUnder(upgraded, null, 1500)).isEqualTo(restoredUnder(upgraded, 100L, 1500));
  }

  @Test
  void failoverWhileWaitingForTheReanchor_keepsTheReanchorTime() {
    JobSpec upgraded = spec(1000, 0, "closeEarly: true");
    ScheduleUpgradeTest world = restored(upgraded, 100L, 1500); // round 2 is [300, 1300)
    world.advanceTo(1400); // round 2 closed at 1300; round 3 waits for the restore time 1500
    assertThat(world.store.progress().closedEarly).isTrue();
    assertThat(world.store.progress().deadlineMillis).isEqualTo(1500);
    for (long now : new long[] {1450, 1480}) {
      world.lifecycle =
          new RoundLifecycle(upgraded, NoiseSources.forSpec(upgraded), LedgerFloor.NONE);
      world.lifecycle.start(world.store, now, world.decided);
      world.lifecycle.keepAlive(world.store, world.decided);
      assertThat(world.store.progress().reanchorMillis).isEqualTo(1500);
    }
    world.advanceTo(2_000);
    assertThat(world.decided.announced).endsWith("3 until 2500");
    assertThat(world.store.progress().fixedSchedule).isTrue();
    assertThat(world.store.progress().reanchorMillis).isZero();
  }

  /**
   * The old version's job is stopped at 800 (no savepoint) with round 2 announced, without the
   * fixed-schedule header; the new version is submitted fresh at {@code now}.
   */
  private static ScheduleUpgradeTest freshStartOnOldTopics(Long xAt, long now) {
    ScheduleUpgradeTest oldRun = oldWorld(xAt);
    JobProgress left = oldRun.store.progress();
    JobSpec upgraded = spec(1000, 0, "closeEarly: true");
    LedgerFloor floor =
        new LedgerReconciler.Reconciled(
                Map.of(
                    JOB,
                    new LedgerFloor(
                        left.ledger.clone(),
                        2,
                        false,
                        1,
                        upgraded.initialWeights(),
                        1,
                        new LedgerFloor.Announced(2, left.openedMillis, left.deadlineMillis, false),
                        null)),
                Long.MIN_VALUE)
            .decidedAt(now)
            .floors()
            .get(JOB);
    ScheduleUpgradeTest run = new ScheduleUpgradeTest();
    run.offset = 1_000;
    run.lifecycle = new RoundLifecycle(upgraded, NoiseSources.forSpec(upgraded), floor);
    run.lifecycle.start(run.store, now, run.decided);
    return run;
  }

  /**
   * Whether round 2's moved deadline has passed at the fresh start must not matter: an earlier
   * version's window is never taken over (charged as skipped instead), and round 3 opens now.
   */
  @Test
  void freshStartOnOldTopics_neverTakesAnEarlierVersionsRoundOver_laterMembersDoNotDependOnX() {
    for (long now : new long[] {900, 1500}) {
      ScheduleUpgradeTest withX = freshStartOnOldTopics(100L, now);
      assertThat(withX.decided.skipped).as("at %d", now).containsExactly(2L);
      assertThat(withX.decided.announced)
          .as("at %d", now)
          .containsExactly("3 until " + (now + 1000));
      assertThat(freshStartOnOldTopics(null, now).laterMembers(now))
          .as("rounds 3 to 6 after a fresh start at %d, x or not", now)
          .isEqualTo(withX.laterMembers(now));
    }
  }

  /** What the releases topic keeps of an announcement, read back as the reconciler reads it. */
  private static boolean announcedAsFixed(JobSpec spec) {
    OutboundRecord emitted = Records.announcement(spec, 2, 1, 700, 1700, null);
    ProducerRecord<byte[], byte[]> written =
        InternalRelease.toInternal("privagg.releases", emitted, new PublicRounds.Run(800, "run"));
    ConsumerRecord<byte[], byte[]> read =
        new ConsumerRecord<>(
            "privagg.releases",
            0,
            0,
            800,
            TimestampType.LOG_APPEND_TIME,
            -1,
            -1,
            written.key(),
            written.value(),
            new RecordHeaders(written.headers().toArray()),
            Optional.empty());
    return InternalRelease.FIXED_SCHEDULE.equals(
        InternalRelease.textHeader(read, InternalRelease.SCHEDULE_HEADER));
  }

  @Test
  void announcements_sayFixedSchedule_exceptUnderNextRoundAtEarlyClose() {
    assertThat(announcedAsFixed(spec(1000, 0, "closeEarly: true"))).isTrue();
    assertThat(announcedAsFixed(spec(1000, 0, "closeEarly: true\nnextRoundAtEarlyClose: true")))
        .isFalse();
  }
}
