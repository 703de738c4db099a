package dev.privagg.job.decide;

import dev.privagg.job.JobProgress;
import dev.privagg.job.OpenRound;
import dev.privagg.job.SecureRoundState;

/**
 * The keyed state of one training job as {@link RoundLifecycle} reads and writes it: the {@link
 * JobProgress} and {@link OpenRound} POJOs, the round's seen clients and the held updates. The
 * Flink adapter backs it with keyed state; unit tests keep it in memory.
 */
interface RoundStore {
  /** The job's progress, or null before the job's first start. */
  JobProgress progress();

  void saveProgress(JobProgress progress);

  /** The open round's accumulator, or null when no round is open. */
  OpenRound openRound();

  void saveOpenRound(OpenRound round);

  /** The open round's secure-aggregation state, or null (plaintext jobs, or no round open). */
  SecureRoundState secureRound();

  void saveSecureRound(SecureRoundState round);

  /**
   * Drops the open round, its seen clients and its secure state: round state never outlives its
   * round.
   */
  void clearRound();

  SeenClients seenClients();

  HeldUpdates held();

  /** The participation schema's per-client counts (correlated noise only). */
  Participations participations();

  /**
   * What the job's rounds were charged under ({@link RoundLifecycle#INDEPENDENT} or correlated
   * noise's description), or null in state from before it was kept.
   */
  String mechanism();

  void saveMechanism(String mechanism);
}
