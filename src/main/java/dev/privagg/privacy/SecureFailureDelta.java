package dev.privagg.privacy;

/**
 * The delta a run of secure rounds adds to its ledger's (epsilon, delta): each round may be
 * released differently than the ideal mechanism the ledger accounts (a sum released with noise
 * alone when unmasking fails) with probability at most {@code beta}. If M equals an (epsilon,
 * delta)-DP mechanism M' except on an event of probability at most p in every world, then for
 * neighbours A, B and any output set S, P[M(A) in S] <= P[M'(A) in S] + p <= e^epsilon P[M'(B) in
 * S] + delta + p <= e^epsilon P[M(B) in S] + delta + (1 + e^epsilon) p; over R rounds p = R beta
 * (union bound). Capped at 1, where it says nothing.
 */
public final class SecureFailureDelta {
  private SecureFailureDelta() {}

  /**
   * {@code min(1, delta + (1 + e^epsilon) rounds beta)}.
   *
   * @param delta the ledger's delta, in [0, 1]
   * @param epsilon the ledger's epsilon at that delta, >= 0 (infinite gives 1)
   * @param rounds rounds charged, >= 0
   * @param beta the per-round failure probability, in [0, 1]
   */
  public static double total(double delta, double epsilon, long rounds, double beta) {
    if (!(delta >= 0 && delta <= 1)) {
      throw new IllegalArgumentException("delta must be in [0, 1], was " + delta);
    }
    if (!(epsilon >= 0)) {
      throw new IllegalArgumentException("epsilon must be >= 0, was " + epsilon);
    }
    if (rounds < 0) {
      throw new IllegalArgumentException("rounds must be >= 0, was " + rounds);
    }
    if (!(beta >= 0 && beta <= 1)) {
      throw new IllegalArgumentException("beta must be in [0, 1], was " + beta);
    }
    if (rounds == 0 || beta == 0) {
      return delta;
    }
    double added = (1 + Math.exp(epsilon)) * rounds * beta;
    return Double.isFinite(added) ? Math.min(1, delta + added) : 1;
  }
}
