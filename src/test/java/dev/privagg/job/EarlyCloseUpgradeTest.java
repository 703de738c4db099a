package dev.privagg.job;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.exactSpec;
import static dev.privagg.job.JobFixtures.readFrom;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A job restored from a savepoint of the version that opened round r + 1 at r's m-th update (its
 * state: round r + 1 open at t_m until t_m + timeout, no fixed schedule) would keep that
 * data-dependent offset for every later round: one client's round-1 update would still move which
 * later updates count, with no charge covering it. The restore re-anchors instead: the round after
 * the open one opens a timeout and the start grace after the restore, in every world.
 *
 * <p>The old version's state is produced here by the chained schedule (nextRoundAtEarlyClose opens
 * the next round exactly as the old version did); the upgrade is a new lifecycle under the private
 * spec (closeEarly only) on that state, as a savepoint restore of the new jar does.
 */
class EarlyCloseUpgradeTest {
  private RoundLifecycle lifecycle;
  private final LifecycleFakes.Store store = new LifecycleFakes.Store();
  private final LifecycleFakes.Recorder decided = new LifecycleFakes.Recorder();
  private long eventTime = Long.MIN_VALUE;

  private void read(DecodedUpdate update, long appended) {
    lifecycle.arrive(store, update, appended, eventTime, 0, decided);
  }

  private void advanceTo(long time) {
    eventTime = time;
    while (!decided.timers.isEmpty() && decided.timers.first() <= time) {
      lifecycle.eventTimeReached(store, decided.timers.pollFirst(), false, 0, decided);
    }
  }

  @Test
  void upgradeFromTheChainingVersion_reanchors_soOneRoundOneUpdateMovesNoLaterRoundsMembers() {
    Map<Long, List<String>> withEarlyX = laterMembers(100L);
    assertThat(withEarlyX.keySet()).containsExactly(3L, 4L, 5L, 6L);
    for (Long xAt : new Long[] {null, 500L}) {
      assertThat(laterMembers(xAt))
          .as("x's round-1 update stamped at %s (before the upgrade)", xAt)
          .isEqualTo(withEarlyX);
    }
  }

  /**
   * Round 1 (old version, m = 2) gets y at 300, z at 700 and x at {@code xAt}; the upgrade is
   * restored at event time 800. Every 50 ms from 0 to 7 s a client claims each of rounds 3 to 6.
   */
  private static Map<Long, List<String>> laterMembers(Long xAt) {
    EarlyCloseUpgradeTest world = new EarlyCloseUpgradeTest();
    JobSpec old = exactSpec("closeEarly: true\nnextRoundAtEarlyClose: true");
    world.lifecycle = new RoundLifecycle(old, NoiseSources.forSpec(old), LedgerFloor.NONE);
    world.lifecycle.start(world.store, 0, world.decided);
    long offset = 0;
    if (xAt != null) {
      world.read(readFrom(0, offset++, update("x", 1, 0.1f, 0f, 0f)), xAt);
    }
    world.read(readFrom(0, offset++, update("y", 1, 0.1f, 0f, 0f)), 300);
    world.read(readFrom(0, offset++, update("z", 1, 0.1f, 0f, 0f)), 700);
    world.advanceTo(800);
    assertThat(world.store.progress().closedEarly).isFalse(); // as the old version left it
    world.store.progress().fixedSchedule = false; // a field the old version did not have

    // The upgrade: the new jar restores that state under the private spec.
    JobSpec upgraded = exactSpec("closeEarly: true");
    world.lifecycle =
        new RoundLifecycle(upgraded, NoiseSources.forSpec(upgraded), LedgerFloor.NONE);
    world.lifecycle.start(world.store, 800, world.decided);
    world.lifecycle.keepAlive(world.store, world.decided);
    for (long t = 800; t < 7 * TIMEOUT; t += 50) {
      for (long round = 3; round <= 6; round++) {
        world.read(readFrom(1, offset++, update("r" + round + "@" + t, round, 0.1f, 0f, 0f)), t);
      }
    }
    world.advanceTo(8 * TIMEOUT);
    Map<Long, List<String>> members = new TreeMap<>();
    for (String client : world.decided.admitted) {
      if (client.startsWith("r")) {
        long round = Long.parseLong(client.substring(1, client.indexOf('@')));
        members.computeIfAbsent(round, r -> new ArrayList<>()).add(client);
      }
    }
    return members;
  }
}
