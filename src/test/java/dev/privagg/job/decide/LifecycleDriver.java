package dev.privagg.job.decide;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;

/**
 * Drives a round decider by broker timestamps and a watermark the way the Flink operator drives it,
 * without Flink: the one driver of every lifecycle test. {@link #releasing} wires it to an
 * in-memory shard and combiner (see {@link LifecycleFakes.Recorder#releasing}) for tests of what a
 * job releases; {@link #recording} keeps one recorder of the decisions across restarts.
 */
final class LifecycleDriver {
  final LifecycleFakes.Store store = new LifecycleFakes.Store();
  LifecycleFakes.Recorder decided;
  RoundLifecycle lifecycle;
  private long eventTime = Long.MIN_VALUE;

  /** A driver whose decisions compute releases; each {@link #start} begins a new recorder. */
  static LifecycleDriver releasing() {
    return new LifecycleDriver();
  }

  /** A driver that records every decision, across restarts, in one recorder. */
  static LifecycleDriver recording() {
    LifecycleDriver driver = new LifecycleDriver();
    driver.decided = new LifecycleFakes.Recorder();
    return driver;
  }

  private LifecycleDriver() {}

  /** Starts (or restarts, on the same store) the job at wall-clock {@code nowMillis}. */
  void start(JobSpec spec, NoiseSource noise, LedgerFloor floor, long nowMillis) {
    decided = LifecycleFakes.Recorder.releasing(spec, noise, floor);
    start(new RoundLifecycle(spec, noise, floor), nowMillis);
  }

  /** {@link #start(JobSpec, NoiseSource, LedgerFloor, long)} with {@code shards} shards. */
  void start(JobSpec spec, NoiseSource noise, LedgerFloor floor, long nowMillis, ShardPlan shards) {
    decided = LifecycleFakes.Recorder.releasing(spec, noise, floor);
    start(new RoundLifecycle(spec, noise, floor, Long.MAX_VALUE, shards), nowMillis);
  }

  /** Starts (or restarts) {@code lifecycle} on this driver's store and recorder. */
  void start(RoundLifecycle lifecycle, long nowMillis) {
    this.lifecycle = lifecycle;
    lifecycle.start(store, nowMillis, decided);
  }

  /** The update is read now, with broker time {@code appended}. */
  void read(DecodedUpdate update, long appended) {
    lifecycle.arrive(store, update, appended, eventTime, 0, decided);
  }

  /** The watermark reaches {@code time}: due timers fire in order, as Flink fires them. */
  void advanceTo(long time) {
    eventTime = time;
    while (!decided.timers.isEmpty() && decided.timers.first() <= time) {
      lifecycle.eventTimeReached(store, decided.timers.pollFirst(), false, 0, decided);
    }
  }
}
