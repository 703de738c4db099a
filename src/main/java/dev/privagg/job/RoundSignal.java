package dev.privagg.job;

import dev.privagg.job.ledger.LedgerCodec;

/**
 * What the round decider tells the combiner of a job: a round opened (its noise can be drawn now),
 * or a round was closed and charged, with the shards whose partial sums make it up.
 */
public class RoundSignal {
  /** The two signals. */
  public enum Kind {
    OPENED,
    SEALED
  }

  public Kind kind;
  public String jobId;
  public long round;

  /** SEALED: release the round (false: the minimum-cohort rule withholds it). */
  public boolean release;

  /** SEALED: the round of the model this round trains on. */
  public long baseModelRound;

  /** SEALED: the routing keys of the shards that sum members of the round. */
  public String[] shards;

  /** SEALED: the members' exact count, and the job's epsilon after the round's charge. */
  public long contributions;

  public double epsilonSpent;

  /**
   * SEALED: the job's ledger after the round's charge and the charge itself ({@link LedgerCodec}
   * bytes), which the model's privacy statement states; null in signals from versions without them.
   */
  public byte[] ledger;

  public byte[] charge;

  public long deadlineMillis;

  /**
   * The C the round's updates are clipped to: the sum's sensitivity, which scales its noise. 0 in
   * signals from versions without it: the spec's C then.
   */
  public double clipNorm;

  /**
   * SEALED: the fixed-point sum that a state from an earlier version had accumulated for the round
   * before this version summed in shards; null otherwise.
   */
  public long[] carriedUnits;

  /**
   * SEALED: the model of {@link #baseModelRound} as a state from an earlier version kept it in the
   * decider (the combiner's state has no model then); null otherwise.
   */
  public float[] carriedModel;

  public RoundSignal() {}

  public static RoundSignal opened(String jobId, long round, double clipNorm) {
    RoundSignal s = new RoundSignal();
    s.kind = Kind.OPENED;
    s.jobId = jobId;
    s.round = round;
    s.clipNorm = clipNorm;
    return s;
  }

  public static RoundSignal sealed(
      ClosedRound closed, boolean release, long baseModelRound, OpenRound members, String jobId) {
    RoundSignal s = new RoundSignal();
    s.kind = Kind.SEALED;
    s.jobId = jobId;
    s.round = closed.round();
    s.release = release;
    s.baseModelRound = baseModelRound;
    s.shards = members.shardKeys == null ? new String[0] : members.shardKeys.clone();
    s.contributions = closed.contributions();
    s.epsilonSpent = closed.epsilonSpent();
    s.ledger = LedgerCodec.write(closed.ledger());
    s.charge = LedgerCodec.write(dev.privagg.privacy.PrivacyLedger.of(closed.charge()));
    s.deadlineMillis = closed.deadlineMillis();
    s.clipNorm = closed.clipping().clipNorm();
    s.carriedUnits = members.carriedUnits();
    return s;
  }
}
