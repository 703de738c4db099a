package dev.privagg.job;

import dev.privagg.avro.RejectReason;
import dev.privagg.privacy.PrivacyEvent;

/**
 * What {@link RoundLifecycle} decides, in the order it decides it. The Flink adapter turns each
 * decision into output records, timers, metrics and logs; unit tests record them.
 */
interface RoundDecisions {
  /** The job's first start: round 0's model is the initial weights. */
  void publishInitialModel(float[] model);

  /** Round {@code round} is open from {@code openedMillis} to {@code deadlineMillis}. */
  void announce(long round, long baseModelRound, long openedMillis, long deadlineMillis);

  /**
   * An earlier run announced {@code round} and its deadline passed before this run could take it
   * over: it is charged (that run may have released it) and not released.
   */
  void skip(long round, PrivacyEvent charge, double epsilonSpent, long atMillis);

  /** The update joined the open round's sum; {@code clipNanos} is the clip-and-add time. */
  void admit(DecodedUpdate update, boolean clipped, long clipNanos);

  /** The update counts as seen but server-side sampling left it out of the sum. */
  void leaveUnsampled(DecodedUpdate update);

  void reject(DecodedUpdate update, RejectReason reason, String detail);

  /**
   * The round was charged and released; {@code model} is the job's new model (read it during the
   * call only), {@code noiseNanos} the time spent noising and averaging.
   */
  void release(ClosedRound round, float[] model, long noiseNanos);

  /** The round was charged but the noisy count fell under the minimum cohort. */
  void withhold(ClosedRound round);

  /** Some clients of {@code round} were turned away with ROUND_FULL. */
  void reportFull(long round, long clientsSeen);

  /** The budget cannot pay for {@code round}: no more rounds run. */
  void exhaust(long round, double epsilonSpent, long atMillis);

  /** The ledger topic showed more spending than the state: the job continues from it. */
  void adopt(LedgerFloor floor, long roundsInState);

  /** A drain's maximum watermark reached the open round, which stays open and uncharged. */
  void drain(long round);

  void registerTimer(long timestamp);

  void deleteTimer(long timestamp);
}
