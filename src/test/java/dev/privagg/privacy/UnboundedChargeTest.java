package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A round charged as unbounded (rounds.nextRoundAtEarlyClose, RoundCharge.unbounded) gives epsilon
 * Infinity in every accountant, alone and composed with bounded rounds, and the budget gate and
 * budget-calc say so without NaN.
 */
class UnboundedChargeTest {
  private static final double DELTA = 1e-5;

  private static PrivacyEvent unbounded() {
    RoundCharge charge = new RoundCharge(0.01, true, true, 0, 0);
    return charge.event(1.1, 1);
  }

  @Test
  void everyAccountant_unboundedRound_isInfinite_aloneAndComposed() {
    PrivacyEvent bounded = PrivacyEvent.sampledGaussian(1.1, 0.01, 10);
    for (String name : Accountant.NAMES) {
      Accountant a = Accountant.named(name);
      assertThat(a.epsilon(PrivacyLedger.of(unbounded()), DELTA).epsilon())
          .as(name + " alone")
          .isEqualTo(Double.POSITIVE_INFINITY);
      assertThat(a.epsilon(PrivacyLedger.of(bounded, unbounded()), DELTA).epsilon())
          .as(name + " after bounded rounds")
          .isEqualTo(Double.POSITIVE_INFINITY);
      assertThat(a.epsilon(PrivacyLedger.of(unbounded().times(1000), bounded), DELTA).epsilon())
          .as(name + " many")
          .isEqualTo(Double.POSITIVE_INFINITY);
      assertThat(
              BudgetStatus.fits(
                  a, PrivacyLedger.of(bounded), Double.POSITIVE_INFINITY, DELTA, unbounded()))
          .as(name + " fits an infinite budget")
          .isTrue();
      assertThat(BudgetStatus.fits(a, PrivacyLedger.of(bounded), 1e9, DELTA, unbounded()))
          .as(name + " never fits a finite budget")
          .isFalse();
      assertThat(a.delta(PrivacyLedger.of(unbounded()), 10)).as(name + " delta").isEqualTo(1.0);
    }
  }

  /**
   * privagg budget-calc --noise-multiplier 0 --budget-epsilon Infinity: remaining must not be NaN.
   */
  @Test
  void budgetStatus_unboundedLedgerUnderAnInfiniteBudget_remainingIsInfinite() {
    for (String name : Accountant.NAMES) {
      BudgetStatus s =
          BudgetStatus.of(
              Accountant.named(name),
              PrivacyLedger.of(unbounded()),
              Double.POSITIVE_INFINITY,
              DELTA,
              unbounded());
      assertThat(s.epsilonSpent()).as(name).isEqualTo(Double.POSITIVE_INFINITY);
      assertThat(s.epsilonRemaining()).as(name + " remaining").isEqualTo(Double.POSITIVE_INFINITY);
    }
  }
}
