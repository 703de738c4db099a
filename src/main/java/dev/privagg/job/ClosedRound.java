package dev.privagg.job;

import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;

/**
 * A round as it was closed and charged: what its ledger entry states.
 *
 * @param charge the event appended to the ledger
 * @param ledger the job's ledger after this charge: what {@code epsilonSpent} is computed from
 * @param epsilonSpent the job's epsilon after this charge
 * @param contributions updates in the sum (exact, operator-internal)
 * @param noisyCount the minimum-cohort rule's noisy count, or null when the rule is off
 * @param clipping the round's C and, under adaptive clipping, what it released for the next C
 * @param closedAtMillis broker time of the close: the deadline, or the m-th update's time
 * @param deadlineMillis the round's deadline
 */
public record ClosedRound(
    long round,
    PrivacyEvent charge,
    PrivacyLedger ledger,
    double epsilonSpent,
    long contributions,
    Double noisyCount,
    Clipping clipping,
    long closedAtMillis,
    long deadlineMillis) {

  /**
   * The C the round's updates were clipped to; with adaptive clipping also the noisy unclipped
   * fraction it released and the C it set for the next round (both null otherwise).
   */
  public record Clipping(double clipNorm, Double noisyUnclippedFraction, Double nextClipNorm) {}
}
