package dev.privagg.privacy;

/**
 * Basic composition (Dwork and Roth 2014, Theorem 3.16): T rounds that are each (epsilon_r,
 * delta_r)-DP compose to (sum epsilon_r, sum delta_r). The target delta is split evenly over the
 * ledger's rounds (delta_r = delta / T). Kept for comparison with the seed systems; always looser
 * than {@link RdpAccountant}.
 */
public final class BasicCompositionAccountant extends CompositionAccountant {
  @Override
  public String name() {
    return "basic";
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
    double roundDelta = delta / rounds;
    double total = 0;
    for (PrivacyEvent event : ledger.events()) {
      total += event.count() * roundEpsilon(event, roundDelta);
    }
    return new PrivacySpent(total, delta, Double.NaN);
  }
}
