package dev.privagg.privacy;

/**
 * The (epsilon, delta) guarantee an accountant derives from a ledger. {@code order} is the RDP
 * order that gave the tightest bound, or NaN for accountants that do not use orders.
 */
public record PrivacySpent(double epsilon, double delta, double order) {
  /** True when the accountant reported an RDP order. */
  public boolean hasOrder() {
    return !Double.isNaN(order);
  }
}
