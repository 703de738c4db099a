package dev.privagg.job.ledger;

import dev.privagg.job.JobProgress;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import java.io.Serializable;

/**
 * What the ledger and model topics already show for a job: the spending that any restored or
 * restarted state must not fall below (design.md invariant 4).
 *
 * @param ledger the charged events, as {@link LedgerCodec} bytes
 * @param lastRound the highest round with a ledger entry or a committed announcement
 * @param exhausted a BUDGET_EXHAUSTED entry exists
 * @param modelRound the round of the latest released model, or -1
 * @param model that model's weights, or null
 * @param chargedThrough the highest round with a ledger entry
 * @param announced the latest committed announcement with its window, or null
 * @param lastCharge the per-round charge of the latest charged ledger entry, or null
 * @param nextClipNorm adaptive clipping's C after the latest charged round, or 0 when the ledger
 *     does not say
 * @param deployment the deployment nonce keyed noise mixes in: the one the topics record, or a
 *     fresh one when they record none (see {@link Deployment}); null only in tests that build
 *     floors by hand
 */
public record LedgerFloor(
    byte[] ledger,
    long lastRound,
    boolean exhausted,
    long modelRound,
    float[] model,
    long chargedThrough,
    Announced announced,
    PrivacyEvent lastCharge,
    double nextClipNorm,
    String deployment)
    implements Serializable {
  /**
   * A round as it was announced: open in [openedMillis, deadlineMillis). {@code fixedSchedule} is
   * false for an announcement of a version whose early close opened the next round at once, so that
   * its window may have been moved by the data (see {@link JobProgress#fixedSchedule}).
   */
  public record Announced(long round, long openedMillis, long deadlineMillis, boolean fixedSchedule)
      implements Serializable {
    /** An announcement of this version. */
    public Announced(long round, long openedMillis, long deadlineMillis) {
      this(round, openedMillis, deadlineMillis, true);
    }
  }

  /** A floor whose every round up to {@code lastRound} has a ledger entry. */
  public LedgerFloor(
      byte[] ledger, long lastRound, boolean exhausted, long modelRound, float[] model) {
    this(ledger, lastRound, exhausted, modelRound, model, lastRound, null, null, 0, null);
  }

  /** A floor that says nothing of adaptive clipping. */
  public LedgerFloor(
      byte[] ledger,
      long lastRound,
      boolean exhausted,
      long modelRound,
      float[] model,
      long chargedThrough,
      Announced announced,
      PrivacyEvent lastCharge) {
    this(
        ledger,
        lastRound,
        exhausted,
        modelRound,
        model,
        chargedThrough,
        announced,
        lastCharge,
        0,
        null);
  }

  /** The latest announced round, if no ledger entry closed it yet and its window is known. */
  public Announced openAnnouncement() {
    return announced != null && announced.round() > chargedThrough ? announced : null;
  }

  /** This floor without its open announcement: a start that must not take that round over. */
  LedgerFloor withoutTakeOver() {
    return new LedgerFloor(
        ledger,
        lastRound,
        exhausted,
        modelRound,
        model,
        chargedThrough,
        null,
        lastCharge,
        nextClipNorm,
        deployment);
  }

  /** Nothing published yet. */
  public static final LedgerFloor NONE =
      new LedgerFloor(LedgerCodec.write(PrivacyLedger.EMPTY), 0, false, -1, null);

  public long rounds() {
    return LedgerCodec.read(ledger).totalCount();
  }

  /**
   * Whether an earlier run of the job id left a trace: a charge, an exhaustion, or an announced
   * round (whose number is public with that run's deadline, so a fresh start must not reuse it).
   */
  public boolean hasHistory() {
    return rounds() > 0 || exhausted || lastRound > 0;
  }
}
