package dev.privagg.privacy;

/**
 * Advanced composition (Dwork, Rothblum, Vadhan 2010, Theorem III.3; Dwork and Roth 2014, Theorem
 * 3.20), in its form for rounds with different epsilon_i: the composition is (epsilon', T delta_r +
 * delta')-DP with epsilon' = sqrt(2 ln(1/delta') sum epsilon_i^2) + sum epsilon_i (e^epsilon_i -
 * 1). Here delta' = delta / 2 and the other half is split evenly over the T rounds (delta_r = delta
 * / (2T)). When basic composition is tighter (few rounds, large epsilon_i) its value is reported,
 * as both bounds hold.
 */
public final class AdvancedCompositionAccountant extends CompositionAccountant {
  @Override
  public String name() {
    return "advanced";
  }

  @Override
  public PrivacySpent epsilon(PrivacyLedger all, double delta) {
    Checks.openUnitInterval("delta", delta);
    // No-op rounds compose as nothing.
    PrivacyLedger ledger = all.charged();
    PrivacyLedger.requireNoRenyiOnlyEvents(ledger, name());
    long rounds = ledger.totalCount();
    if (rounds == 0) {
      return new PrivacySpent(0, delta, Double.NaN);
    }
    double slack = delta / 2;
    double roundDelta = (delta - slack) / rounds;
    double sumSquares = 0;
    double sumExcess = 0;
    double sumBasic = 0;
    for (PrivacyEvent event : ledger.events()) {
      double eps = roundEpsilon(event, roundDelta);
      sumSquares += event.count() * eps * eps;
      sumExcess += event.count() * eps * Math.expm1(eps);
      sumBasic += event.count() * eps;
    }
    double advanced = Math.sqrt(2 * Math.log(1 / slack) * sumSquares) + sumExcess;
    // Basic composition at the same per-round delta_r spends T delta_r < delta, so it also holds.
    return new PrivacySpent(Math.min(advanced, sumBasic), delta, Double.NaN);
  }
}
