package dev.privagg.status;

/**
 * One round as the ledger records it, for operators.
 *
 * @param outcome the ledger's outcome: RELEASED, NOT_RELEASED_MIN_COHORT, SKIPPED or
 *     BUDGET_EXHAUSTED (the round the budget could not pay for)
 * @param contributions the exact count of updates summed (operator-internal)
 * @param epsilonSpent the job's epsilon after this entry
 * @param writtenMillis when the job wrote the entry (its record's timestamp): a released round's
 *     model is written with it
 * @param deadlineMillis the round's announced deadline; -1 when its announcement was not seen
 */
public record RoundRecord(
    long round,
    String outcome,
    long contributions,
    double epsilonSpent,
    long writtenMillis,
    long deadlineMillis) {

  /** Whether the round's model was published. */
  public boolean released() {
    return outcome.equals("RELEASED");
  }

  /** How long after the round's deadline the job wrote it; null without a known deadline. */
  public Long millisAfterDeadline() {
    return deadlineMillis < 0 ? null : writtenMillis - deadlineMillis;
  }

  /** Whether this entry says the budget ran out (and charged nothing). */
  public boolean exhausted() {
    return outcome.equals("BUDGET_EXHAUSTED");
  }
}
