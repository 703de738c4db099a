package dev.privagg.job.decide;

import dev.privagg.avro.RejectReason;
import dev.privagg.avro.SecureRound;
import dev.privagg.job.ClosedRound;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.OpenRound;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.PrivacyEvent;

/**
 * What {@link RoundLifecycle} decides, in the order it decides it. The Flink adapter turns each
 * decision into output records, timers, metrics and logs; unit tests record them.
 */
interface RoundDecisions {
  /** The job's first start: round 0's model is the initial weights. */
  void publishInitialModel(float[] model);

  /**
   * Round {@code round} is open from {@code openedMillis} to {@code deadlineMillis}; its updates
   * are clipped to {@code clipNorm}.
   */
  void announce(
      long round, long baseModelRound, long openedMillis, long deadlineMillis, double clipNorm);

  /**
   * An earlier run announced {@code round} and its deadline passed before this run could take it
   * over: it is charged (that run may have released it) and not released.
   */
  void skip(long round, PrivacyEvent charge, double epsilonSpent, double clipNorm, long atMillis);

  /**
   * The update joins the open round: shard {@code shardKey} clips it to {@code clipNorm}, sums it.
   */
  void admit(DecodedUpdate update, String shardKey, double clipNorm);

  /** The update counts as seen but server-side sampling left it out of the sum. */
  void leaveUnsampled(DecodedUpdate update);

  void reject(DecodedUpdate update, RejectReason reason, String detail);

  /**
   * A secure round's client was proven (or, for rejected shares, shown but for 2^-41 / n) to
   * misbehave: named on the rejects topic with the message that shows it ({@code update}'s
   * position), counted in {@code secureClientsNamed}.
   */
  void misbehaved(DecodedUpdate update, String detail);

  /**
   * The round was charged and is released: its shards (in {@code members}) hand their sums to the
   * combiner, which moves the model of round {@code baseModelRound} by the noisy average. {@code
   * carriedBase}: that model as state from an earlier version kept it in the decider (the combiner
   * holds no model then), or null.
   */
  void release(ClosedRound round, long baseModelRound, OpenRound members, float[] carriedBase);

  /**
   * The round was charged but the noisy count fell under the minimum cohort: sealed, not released.
   */
  void withhold(ClosedRound round, OpenRound members);

  /** The open round {@code round} ends uncharged and unreleased: its shards drop its sums. */
  void discard(long round, OpenRound members);

  /** Some clients of {@code round} were turned away with ROUND_FULL. */
  void reportFull(long round, long clientsSeen);

  /**
   * The budget cannot pay for {@code round}: no more rounds run. {@code firstUnopened} is the first
   * round never announced as open ({@code round}, or the one after it when {@code round} was
   * announced before its charge failed); the public budget-spent record names it, with the final
   * model's round.
   */
  void exhaust(
      long round, long firstUnopened, long finalModelRound, double epsilonSpent, long atMillis);

  /** The ledger topic showed more spending than the state: the job continues from it. */
  void adopt(LedgerFloor floor, long roundsInState);

  /** A drain's maximum watermark reached the open round, which stays open and uncharged. */
  void drain(long round);

  void registerTimer(long timestamp);

  /** A secure-aggregation message to the round's clients, on the secure topic. */
  void secureRound(SecureRound message);

  /**
   * A secure round's masked inputs could not be unmasked ({@code problem} says why): it is released
   * without their sum.
   */
  void unmaskFailed(long round, long maskedInputs, String problem);

  /** A closed secure round's mask correction for one block of coordinates. */
  void unmask(UnmaskRequest request);

  void deleteTimer(long timestamp);
}
