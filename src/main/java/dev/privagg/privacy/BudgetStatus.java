package dev.privagg.privacy;

/**
 * Where a job stands against its (epsilon, delta) budget: epsilon spent by the ledger, what
 * remains, and how many more rounds of {@code nextRound} fit before the budget would be exceeded.
 *
 * @param roundsRemaining more rounds that fit; {@link Long#MAX_VALUE} when the budget is infinite
 *     or the next round costs nothing
 */
public record BudgetStatus(
    String accountant,
    double budgetEpsilon,
    double delta,
    double epsilonSpent,
    double epsilonRemaining,
    long roundsRemaining) {

  /** The largest count the search for remaining rounds will report before saying "unbounded". */
  private static final long SEARCH_LIMIT = 1L << 40;

  /**
   * Computes the status of {@code ledger} against {@code budgetEpsilon} (may be +infinity).
   * Remaining rounds come from a search on the count, which is monotone for every accountant here.
   */
  public static BudgetStatus of(
      Accountant accountant,
      PrivacyLedger ledger,
      double budgetEpsilon,
      double delta,
      PrivacyEvent nextRound) {
    if (!(budgetEpsilon > 0)) {
      throw new IllegalArgumentException("budgetEpsilon must be > 0, was " + budgetEpsilon);
    }
    Checks.openUnitInterval("delta", delta);
    double spent = accountant.epsilon(ledger, delta).epsilon();
    // An infinite budget never runs out, even after an unbounded charge (Infinity - Infinity).
    double remaining =
        Double.isInfinite(budgetEpsilon)
            ? Double.POSITIVE_INFINITY
            : Math.max(0, budgetEpsilon - spent);
    long rounds = roundsThatFit(accountant, ledger, budgetEpsilon, delta, nextRound);
    return new BudgetStatus(accountant.name(), budgetEpsilon, delta, spent, remaining, rounds);
  }

  /** True when composing one more {@code nextRound} would stay within the budget. */
  public static boolean fits(
      Accountant accountant,
      PrivacyLedger ledger,
      double budgetEpsilon,
      double delta,
      PrivacyEvent nextRound) {
    return accountant.epsilon(ledger.append(nextRound), delta).epsilon() <= budgetEpsilon;
  }

  private static long roundsThatFit(
      Accountant accountant, PrivacyLedger ledger, double budget, double delta, PrivacyEvent one) {
    if (Double.isInfinite(budget)) {
      return Long.MAX_VALUE;
    }
    if (!fits(accountant, ledger, budget, delta, one)) {
      return 0;
    }
    long lo = 1; // fits
    long hi = 2;
    while (fits(accountant, ledger, budget, delta, one.times(hi))) {
      lo = hi;
      hi *= 2;
      if (hi > SEARCH_LIMIT) {
        return Long.MAX_VALUE;
      }
    }
    while (hi - lo > 1) {
      long mid = lo + (hi - lo) / 2;
      if (fits(accountant, ledger, budget, delta, one.times(mid))) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
