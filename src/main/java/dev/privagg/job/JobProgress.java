package dev.privagg.job;

import dev.privagg.job.ledger.LedgerCodec;

/**
 * Per-job progress kept in keyed state. {@code ledger} holds the accountant's events (see {@link
 * LedgerCodec}); epsilon is always derived from it.
 */
public class JobProgress {
  /** The open round (or the round that would have opened when the budget ran out). */
  public long currentRound;

  /** The round of the latest released model: what the open round trains on. */
  public long modelRound;

  /**
   * Broker time at which the open round opened. 0 in state written before it was kept: that round
   * then takes any update stamped before its deadline.
   */
  public long openedMillis;

  public long deadlineMillis;

  /**
   * The current round closed early (at its m-th update) and is released; the next opens at its
   * deadline, which keeps the schedule independent of the data. False in state from versions that
   * opened the next round at once.
   */
  public boolean closedEarly;

  /**
   * Every window since the job started (or was last re-anchored) is a function of start times and
   * the timeout, never of the updates. False in state from versions whose early close opened the
   * next round at once: one client's timing may have moved every later window, so such a job
   * re-anchors once (see {@code RoundLifecycle.reanchor}).
   */
  public boolean fixedSchedule;

  /**
   * With {@link #fixedSchedule} false: the earliest opening of the next round, chosen at the first
   * start after the restore, whatever the current round's (possibly moved) deadline; 0 until then.
   */
  public long reanchorMillis;

  public boolean exhausted;
  public byte[] ledger;

  /**
   * Adaptive clipping's C for the open round (and, once it closes, for the next); 0 with a fixed C
   * and in state from versions without adaptive clipping.
   */
  public double clipNorm;

  public float[] model;

  public JobProgress() {}
}
