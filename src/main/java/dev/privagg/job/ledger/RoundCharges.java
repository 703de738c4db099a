package dev.privagg.job.ledger;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.bandmf.AmplifiedBandMf;
import dev.privagg.correlated.BltPlan;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.BudgetStatus;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import dev.privagg.privacy.MechanismKind;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;

/**
 * What each round of a job costs before anything is known of its members, from the spec alone: the
 * charge the job checks against the budget when it opens a round, and so how many more rounds the
 * budget pays for. Pure: the round decider charges with it, operators' views forecast with it.
 */
public final class RoundCharges {
  private final JobSpec spec;
  private BltPlan bltPlan;

  public RoundCharges(JobSpec spec) {
    this.spec = spec;
  }

  /**
   * What round {@code round} costs: the same event every round with independent noise; with
   * correlated noise the round's increment of the run's one Gaussian mechanism, or null (never
   * runs) past the planned rounds, for which the sensitivity holds no bound.
   */
  public PrivacyEvent of(long round) {
    if (!spec.correlated()) {
      return spec.roundCharge().event(spec.privacy().noiseMultiplier(), 1);
    }
    if (round < 1 || round > spec.privacy().plannedRounds()) {
      return null;
    }
    if (spec.roundCharge().unbounded()) {
      return spec.roundCharge().event(spec.privacy().noiseMultiplier(), 1); // a throughput run
    }
    JobSpec.Correlated c = spec.privacy().correlated();
    if (c.banded()) {
      AmplifiedBandMf run =
          new AmplifiedBandMf(
              spec.privacy().noiseMultiplier(),
              spec.privacy().sampling().rate(),
              spec.privacy().plannedRounds(),
              c.minSeparation());
      return run.charges(round) ? run.roundEvent() : PrivacyEvent.noOp(1);
    }
    return CorrelatedNoiseAccounting.roundCharge(
        spec.privacy().noiseMultiplier(),
        c.plannedSensitivity(),
        round == 1 ? 0 : bltPlan().sensitivityOfFirstRounds(round - 1),
        bltPlan().sensitivityOfFirstRounds(round));
  }

  /** The charge a ledger entry records; null for one that charges nothing (BUDGET_EXHAUSTED). */
  public static PrivacyEvent charged(LedgerEntry e) {
    if (e.getOutcome() == LedgerOutcome.BUDGET_EXHAUSTED || e.getMechanismKind() == null) {
      return null;
    }
    return new PrivacyEvent(
        MechanismKind.parse(e.getMechanismKind()),
        e.getChargedNoiseMultiplier(),
        e.getChargedSamplingRate(),
        1);
  }

  /** True when the budget still pays for {@code next} on top of {@code ledger}. */
  public boolean fits(PrivacyLedger ledger, PrivacyEvent next) {
    return BudgetStatus.fits(
        accountant(), ledger, spec.privacy().budgetEpsilon(), spec.privacy().delta(), next);
  }

  /**
   * How many rounds after {@code lastCharged} the budget pays for, on top of {@code ledger}; {@link
   * Long#MAX_VALUE} when no budget or plan ever stops the job. Each round is charged whether or not
   * any client sends, so this is also how many more round timeouts the job runs.
   */
  public long roundsThatFit(PrivacyLedger ledger, long lastCharged) {
    if (!spec.correlated()) {
      return BudgetStatus.of(
              accountant(),
              ledger,
              spec.privacy().budgetEpsilon(),
              spec.privacy().delta(),
              of(lastCharged + 1))
          .roundsRemaining();
    }
    // Charges differ from round to round: the largest k whose rounds all fit, by bisection (the
    // spent epsilon only grows with k).
    long low = 0;
    long high = Math.max(0, spec.privacy().plannedRounds() - lastCharged);
    while (low < high) {
      long k = (low + high + 1) / 2;
      if (fitsRounds(ledger, lastCharged, k)) {
        low = k;
      } else {
        high = k - 1;
      }
    }
    return low;
  }

  private boolean fitsRounds(PrivacyLedger ledger, long lastCharged, long k) {
    PrivacyLedger more = ledger;
    for (long r = lastCharged + 1; r < lastCharged + k; r++) {
      more = more.append(of(r));
    }
    return fits(more, of(lastCharged + k));
  }

  private Accountant accountant() {
    return Accountant.named(spec.privacy().accountant());
  }

  /** The BLT plan of a correlated spec, built on first use. */
  private BltPlan bltPlan() {
    if (bltPlan == null) {
      JobSpec.Correlated c = spec.privacy().correlated();
      bltPlan = BltPlan.of(c.schema(spec.privacy().plannedRounds()), c.strategy());
    }
    return bltPlan;
  }
}
