package dev.privagg.audit;

/**
 * When an inserted canary sends, so that it takes part in rounds as an honest client of the job
 * would (Andrew et al. insert canaries at the real clients' participation rate):
 *
 * <ul>
 *   <li>{@link #everyRound()}: with no sampling or server sampling every client sends every round
 *       (the job samples);
 *   <li>{@link #poisson(double)}: with declared client-side sampling each canary draws its own
 *       participation per round with the declared rate, from the secret, so the draws are as
 *       unpredictable to the server as a client's;
 *   <li>{@link #schema(int, int)}: under a participation schema (b, k) canary i sends in rounds 1 +
 *       (i mod b), then every b rounds, at most k times: never rejected, and spread so that every
 *       round sees about K / b canaries.
 * </ul>
 */
public record CanarySchedule(Kind kind, double rate, int minSeparation, int maxParticipations) {
  /** The three participation rules above. */
  public enum Kind {
    EVERY_ROUND,
    POISSON,
    SCHEMA
  }

  public CanarySchedule {
    if (kind == Kind.POISSON && !(rate > 0 && rate <= 1)) {
      throw new IllegalArgumentException("canary sampling rate must be in (0, 1], was " + rate);
    }
    if (kind == Kind.SCHEMA && !(minSeparation >= 1 && maxParticipations >= 1)) {
      throw new IllegalArgumentException(
          "a participation schema needs minSeparation >= 1 and maxParticipations >= 1, was "
              + minSeparation
              + " and "
              + maxParticipations);
    }
  }

  /** Every canary in every round. */
  public static CanarySchedule everyRound() {
    return new CanarySchedule(Kind.EVERY_ROUND, 1, 1, Integer.MAX_VALUE);
  }

  /** Each canary in each round with probability {@code rate}, drawn from the secret. */
  public static CanarySchedule poisson(double rate) {
    return new CanarySchedule(Kind.POISSON, rate, 1, Integer.MAX_VALUE);
  }

  /** Every {@code minSeparation} rounds, staggered by index, at most {@code maxParticipations}. */
  public static CanarySchedule schema(int minSeparation, int maxParticipations) {
    return new CanarySchedule(Kind.SCHEMA, 1, minSeparation, maxParticipations);
  }

  /** Whether inserted canary {@code index} of {@code canaries} sends in {@code round} (from 1). */
  public boolean sends(CanarySet canaries, int index, long round) {
    if (round < 1) {
      throw new IllegalArgumentException("rounds to send in start at 1, was " + round);
    }
    return switch (kind) {
      case EVERY_ROUND -> true;
      case POISSON -> canaries.participationDraw(index, round) < rate;
      case SCHEMA -> {
        long first = 1 + index % minSeparation;
        yield round >= first
            && (round - first) % minSeparation == 0
            && (round - first) / minSeparation < maxParticipations;
      }
    };
  }
}
