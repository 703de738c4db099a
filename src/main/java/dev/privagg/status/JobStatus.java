package dev.privagg.status;

import java.util.List;
import java.util.Map;

/**
 * Where a running job stands, from what its topics show (read_committed): an immutable snapshot.
 *
 * @param rounds the latest rounds the ledger recorded, oldest first (at most {@link
 *     StatusTracker#ROUNDS_KEPT})
 * @param duplicateCharges charges of a round the ledger had charged already: a second Flink job
 *     served the job id (each run charges what it may have released); epsilon counts them all
 * @param roundsRemaining rounds the budget still pays for; {@link Long#MAX_VALUE} when unbounded
 * @param openRound the round open now, or -1 when none is (not started yet, between rounds, or the
 *     budget is spent)
 * @param openDeadlineMillis the open round's deadline; -1 without an open round
 * @param rejects updates the job turned away, by reason (rejects topic)
 * @param rejectsWindow 0 when {@code rejects} counts the whole rejects topic; else the latest
 *     records per partition it counts (the topic holds more)
 * @param scheduledStartMillis the spec's {@code rounds.startAt} while nothing shows the job started
 *     (no round announced or charged); 0 otherwise
 */
public record JobStatus(
    String jobId,
    double budgetEpsilon,
    double delta,
    String accountant,
    long roundsReleased,
    long roundsWithheld,
    long roundsSkipped,
    long duplicateCharges,
    boolean exhausted,
    double epsilonSpent,
    long roundsRemaining,
    long openRound,
    long openDeadlineMillis,
    long finalModelRound,
    List<RoundRecord> rounds,
    Map<String, Long> rejects,
    long rejectsWindow,
    long scheduledStartMillis) {

  public JobStatus {
    rounds = List.copyOf(rounds);
    rejects = Map.copyOf(rejects);
  }

  /** Epsilon the budget still allows; infinite for an unlimited budget. */
  public double epsilonRemaining() {
    return Math.max(0, budgetEpsilon - epsilonSpent);
  }

  /** Rounds the ledger charged: released, withheld by the minimum cohort, or skipped. */
  public long roundsCharged() {
    return roundsReleased + roundsWithheld + roundsSkipped;
  }
}
