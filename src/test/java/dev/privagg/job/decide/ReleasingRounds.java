package dev.privagg.job.decide;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;

/**
 * A round decider wired to an in-memory shard and combiner (see {@link
 * LifecycleFakes.Recorder#releasing}), driven by broker timestamps and a watermark the way the
 * Flink operator drives it: for tests of what a job releases, without Flink.
 */
final class ReleasingRounds {
  final LifecycleFakes.Store store = new LifecycleFakes.Store();
  LifecycleFakes.Recorder decided;
  private RoundLifecycle lifecycle;
  private long eventTime = Long.MIN_VALUE;

  /** Starts (or restarts, on the same store) the job at wall-clock {@code nowMillis}. */
  void start(JobSpec spec, NoiseSource noise, LedgerFloor floor, long nowMillis) {
    decided = LifecycleFakes.Recorder.releasing(spec, noise, floor);
    lifecycle = new RoundLifecycle(spec, noise, floor);
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
