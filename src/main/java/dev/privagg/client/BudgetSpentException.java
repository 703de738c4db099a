package dev.privagg.client;

import dev.privagg.avro.RoundAnnouncement;

/**
 * The job said publicly that its privacy budget is spent: the round or model waited for never
 * comes. Carries the job's record: rounds from its round on never open, and its base model round is
 * the final model.
 */
public final class BudgetSpentException extends RuntimeException {
  private final transient RoundAnnouncement record;

  BudgetSpentException(String jobId, String what, RoundAnnouncement record) {
    super(
        "job "
            + jobId
            + ": the privacy budget is spent, so "
            + what
            + "; rounds from "
            + record.getRound()
            + " on never open and the final model is round "
            + record.getBaseModelRound());
    this.record = record;
  }

  /** The first round that never opens. */
  public long firstUnopened() {
    return record.getRound();
  }

  /** The final model's round. */
  public long finalModelRound() {
    return record.getBaseModelRound();
  }
}
