package dev.privagg.correlated;

/**
 * Who may take part when, over a run of n rounds: any one client participates in at most k rounds,
 * and two of its participations in rounds i < j satisfy {@code j - i >= b}, the difference of round
 * indices (Choquette-Choo et al. 2023, arXiv:2306.08153; jax_privacy {@code min_sep}); b = 1 allows
 * every round.
 *
 * @param rounds n, the number of rounds (>= 1)
 * @param minSeparation b, the least difference of round indices between two participations (>= 1)
 * @param maxParticipations k, the most participations of one client (>= 1)
 */
public record ParticipationSchema(long rounds, int minSeparation, int maxParticipations) {
  public ParticipationSchema {
    if (rounds < 1) {
      throw new IllegalArgumentException("rounds must be >= 1, was " + rounds);
    }
    if (minSeparation < 1) {
      throw new IllegalArgumentException("minSeparation must be >= 1, was " + minSeparation);
    }
    if (maxParticipations < 1) {
      throw new IllegalArgumentException(
          "maxParticipations must be >= 1, was " + maxParticipations);
    }
  }

  /** One participation per client over the run (b = n, k = 1). */
  public static ParticipationSchema single(long rounds) {
    return new ParticipationSchema(rounds, (int) Math.min(Integer.MAX_VALUE, rounds), 1);
  }

  /**
   * The participations actually possible, {@code min(k, ceil(n / b))} (jax_privacy {@code
   * minsep_true_max_participations}).
   */
  public int effectiveMaxParticipations() {
    return effectiveMaxParticipations(rounds, minSeparation, maxParticipations);
  }

  /** {@code min(k, ceil(n / b))}. */
  static int effectiveMaxParticipations(long n, int b, int k) {
    long possible = (n + b - 1) / b;
    return (int) Math.min(k, possible);
  }
}
