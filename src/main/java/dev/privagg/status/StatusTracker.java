package dev.privagg.status;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.job.ledger.RoundCharges;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Map;
import java.util.TreeMap;

/**
 * Folds one job's ledger entries, round announcements and rejects, in topic order, into its {@link
 * JobStatus}. Records of other jobs sharing the topics are ignored. Epsilon is the accountant's on
 * every charge the ledger holds, as a start adopts it, never an entry's own figure. Memory: the
 * latest {@link #ROUNDS_KEPT} rounds, the deadlines of as many announced rounds, a count per reject
 * reason, and the numbers of the charged rounds (8 bytes each and some, to find a second job's
 * charges for the same round).
 */
public final class StatusTracker {
  /** Rounds a snapshot lists. */
  public static final int ROUNDS_KEPT = 50;

  private final JobSpec spec;
  private final RoundCharges charges;
  private PrivacyLedger ledger = PrivacyLedger.EMPTY;
  private long lastCharged;
  private long lastDecided;
  private long released;
  private long withheld;
  private long skipped;
  private boolean exhausted;
  private final java.util.Set<Long> chargedRounds = new java.util.HashSet<>();
  private long duplicateCharges;
  private long rejectsWindow;
  private long finalModelRound;
  private long latestAnnounced = -1;
  private final TreeMap<Long, Long> deadlines = new TreeMap<>();
  private final ArrayDeque<RoundRecord> rounds = new ArrayDeque<>();
  private final Map<String, Long> rejects = new TreeMap<>();

  public StatusTracker(JobSpec spec) {
    this.spec = spec;
    this.charges = new RoundCharges(spec);
  }

  public String jobId() {
    return spec.jobId();
  }

  /**
   * A ledger entry, written at {@code writtenMillis} (its record's timestamp); returns the round it
   * records, or null for another job's.
   */
  public RoundRecord ledger(LedgerEntry e, long writtenMillis) {
    if (!e.getJobId().equals(spec.jobId())) {
      return null;
    }
    PrivacyEvent charge = RoundCharges.charged(e);
    if (charge != null) {
      // Every charge counts, a second job's for the same round too: the next start adopts them all.
      ledger = ledger.append(charge);
      lastCharged = Math.max(lastCharged, e.getRound());
      if (!chargedRounds.add(e.getRound())) {
        duplicateCharges++;
      }
    }
    switch (e.getOutcome()) {
      case RELEASED -> {
        released++;
        finalModelRound = Math.max(finalModelRound, e.getRound());
      }
      case NOT_RELEASED_MIN_COHORT -> withheld++;
      case SKIPPED -> skipped++;
      case BUDGET_EXHAUSTED -> exhausted = true;
    }
    lastDecided = Math.max(lastDecided, e.getRound());
    RoundRecord record =
        new RoundRecord(
            e.getRound(),
            e.getOutcome().name(),
            e.getOutcome() == LedgerOutcome.BUDGET_EXHAUSTED ? 0 : e.getContributions(),
            e.getEpsilonSpent(),
            writtenMillis,
            deadlines.getOrDefault(e.getRound(), -1L));
    rounds.addLast(record);
    while (rounds.size() > ROUNDS_KEPT) {
      rounds.removeFirst();
    }
    return record;
  }

  /** A public round announcement, or the budget-spent record. */
  public void announcement(RoundAnnouncement a) {
    if (!a.getJobId().equals(spec.jobId())) {
      return;
    }
    if (a.getBudgetSpent()) {
      exhausted = true;
      finalModelRound = Math.max(finalModelRound, a.getBaseModelRound());
      return;
    }
    latestAnnounced = Math.max(latestAnnounced, a.getRound());
    deadlines.put(a.getRound(), a.getDeadlineMillis());
    while (deadlines.size() > ROUNDS_KEPT) {
      deadlines.pollFirstEntry();
    }
  }

  /** A rejected update: counted by reason when it names this job. */
  public void reject(RejectedUpdate r) {
    if (r.getJobId() != null && r.getJobId().equals(spec.jobId())) {
      rejects.merge(r.getReason().name(), 1L, Long::sum);
    }
  }

  /** The latest released model's round (0: the initial model), or the final one once spent. */
  public long finalModelRound() {
    return finalModelRound;
  }

  /** The rejects topic is read from its latest {@code perPartition} records per partition only. */
  public void rejectsFromLatestOnly(long perPartition) {
    rejectsWindow = perPartition;
  }

  /** Whether the records seen say the budget is spent. */
  public boolean exhausted() {
    return exhausted;
  }

  /** Where the job stands after the records seen so far. */
  public JobStatus snapshot() {
    boolean open = !exhausted && latestAnnounced > lastDecided;
    long remaining = exhausted ? 0 : charges.roundsThatFit(ledger, lastCharged);
    double epsilonSpent =
        Accountant.named(spec.privacy().accountant())
            .epsilon(ledger, spec.privacy().delta())
            .epsilon();
    return new JobStatus(
        spec.jobId(),
        spec.privacy().budgetEpsilon(),
        spec.privacy().delta(),
        spec.privacy().accountant(),
        released,
        withheld,
        skipped,
        duplicateCharges,
        exhausted,
        epsilonSpent,
        remaining,
        open ? latestAnnounced : -1,
        open ? deadlines.get(latestAnnounced) : -1,
        finalModelRound,
        new ArrayList<>(rounds),
        rejects,
        rejectsWindow,
        latestAnnounced < 0 && lastDecided == 0 ? spec.rounds().startAtMillis() : 0);
  }
}
