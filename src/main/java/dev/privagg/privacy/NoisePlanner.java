package dev.privagg.privacy;

/**
 * Finds the smallest noise multiplier for which {@code rounds} rounds at sampling rate {@code q}
 * stay within a target (epsilon, delta) under a given accountant.
 *
 * <p>Bisection on the noise multiplier, which every accountant here maps monotonically to epsilon.
 * The result is always the upper end of the final bracket, whose epsilon was computed and is <= the
 * target; returning the midpoint or lower end can overshoot the target (the bug of Opacus issue
 * #346).
 */
public final class NoisePlanner {
  private static final double MAX_NOISE_MULTIPLIER = 1e6;
  private static final double RELATIVE_TOLERANCE = 1e-6;

  private final Accountant accountant;

  /** A planner that measures epsilon with {@code accountant}. */
  public NoisePlanner(Accountant accountant) {
    if (accountant == null) {
      throw new IllegalArgumentException("accountant must be set, was null");
    }
    this.accountant = accountant;
  }

  /** The plan: smallest noise multiplier found and the epsilon it spends (<= target). */
  public record Plan(double noiseMultiplier, PrivacySpent spent) {}

  /** Smallest noise multiplier such that the planned rounds spend at most targetEpsilon. */
  public Plan plan(double targetEpsilon, double delta, long rounds, double samplingRate) {
    Checks.samplingRate("samplingRate", samplingRate);
    return plan(targetEpsilon, delta, rounds, new RoundCharge(samplingRate, false, 0));
  }

  /** The same for rounds charged as {@code charge} says (replace-one, noisy cohort). */
  public Plan plan(double targetEpsilon, double delta, long rounds, RoundCharge charge) {
    Checks.positiveFinite("targetEpsilon", targetEpsilon);
    Checks.openUnitInterval("delta", delta);
    Checks.atLeastOne("rounds", rounds);

    double lo = 0; // epsilon(0) is infinite, so lo is always on the unsafe side
    double hi = 1;
    PrivacySpent hiSpent = spent(hi, delta, rounds, charge);
    while (!(hiSpent.epsilon() <= targetEpsilon)) {
      lo = hi;
      hi *= 2;
      if (hi > MAX_NOISE_MULTIPLIER) {
        throw new IllegalArgumentException(
            "no noise multiplier up to "
                + MAX_NOISE_MULTIPLIER
                + " reaches targetEpsilon "
                + targetEpsilon
                + " at delta "
                + delta
                + " over "
                + rounds
                + " rounds; raise targetEpsilon or delta, or plan fewer rounds");
      }
      hiSpent = spent(hi, delta, rounds, charge);
    }
    while (hi - lo > RELATIVE_TOLERANCE * hi) {
      double mid = 0.5 * (lo + hi);
      PrivacySpent midSpent = spent(mid, delta, rounds, charge);
      if (midSpent.epsilon() <= targetEpsilon) {
        hi = mid;
        hiSpent = midSpent;
      } else {
        lo = mid;
      }
    }
    return new Plan(hi, hiSpent);
  }

  private PrivacySpent spent(
      double noiseMultiplier, double delta, long rounds, RoundCharge charge) {
    PrivacyLedger ledger = PrivacyLedger.of(charge.event(noiseMultiplier, rounds));
    return accountant.epsilon(ledger, delta);
  }
}
