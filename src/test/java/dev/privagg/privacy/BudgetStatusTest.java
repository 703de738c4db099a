package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class BudgetStatusTest {
  private final Accountant rdp = RdpAccountant.withDefaultOrders();
  private final PrivacyEvent round = PrivacyEvent.sampledGaussian(1.1, 0.2, 1);

  @Test
  void roundsRemaining_isTheExactNumberThatFits() {
    PrivacyLedger ledger = PrivacyLedger.of(round.times(20));
    BudgetStatus status = BudgetStatus.of(rdp, ledger, 8.0, 1e-5, round);
    long k = status.roundsRemaining();
    assertThat(k).isPositive();
    assertThat(rdp.epsilon(ledger.append(round.times(k)), 1e-5).epsilon()).isLessThanOrEqualTo(8.0);
    assertThat(rdp.epsilon(ledger.append(round.times(k + 1)), 1e-5).epsilon()).isGreaterThan(8.0);
    assertThat(status.epsilonSpent() + status.epsilonRemaining()).isCloseTo(8.0, within(1e-12));
  }

  @Test
  void exhaustedBudget_hasNoRoundsLeft() {
    PrivacyLedger ledger = PrivacyLedger.of(round.times(10_000));
    BudgetStatus status = BudgetStatus.of(rdp, ledger, 1.0, 1e-5, round);
    assertThat(status.roundsRemaining()).isZero();
    assertThat(status.epsilonRemaining()).isZero();
    assertThat(BudgetStatus.fits(rdp, ledger, 1.0, 1e-5, round)).isFalse();
  }

  @Test
  void infiniteBudget_withZeroNoise_isUnbounded() {
    PrivacyEvent noNoise = PrivacyEvent.gaussian(0.0, 1);
    BudgetStatus status =
        BudgetStatus.of(rdp, PrivacyLedger.of(noNoise), Double.POSITIVE_INFINITY, 1e-5, noNoise);
    assertThat(status.epsilonSpent()).isInfinite();
    assertThat(status.roundsRemaining()).isEqualTo(Long.MAX_VALUE);
  }
}
