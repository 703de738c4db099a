package dev.privagg.sim;

import dev.privagg.privacy.Checks;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Check-in participation, as a cross-device fleet with device-side rate limits runs it: each round
 * {@code cohort} clients check in, drawn uniformly without replacement from the clients that are
 * eligible under the participation schema (b, k) = ({@code minSeparation}, {@code
 * maxParticipations}): a client that contributed in round r may contribute again in round r' only
 * if r' - r >= b (b = 1 allows consecutive rounds), and at most k times in all. This is the schema
 * of BLT matrix-factorization DP-FTRL (Dvijotham et al. 2024; Choquette-Choo et al. 2023, Section
 * 2); the job enforces it by client id whatever the clients do.
 *
 * <p>Nothing is secret and nothing is claimed for amplification: who checks in is a public function
 * of the seed and the history. A round with fewer than {@code cohort} eligible clients takes all of
 * them; {@link Schedule#firstShortRound()} names the first such round, so that a configuration
 * whose schema cannot carry the cohort is refused before any work.
 *
 * <p>The schedule of rounds 1..n is one pure function of (clients, cohort, b, k, seed, n): one
 * {@link SplittableRandom} seeded with {@code seed} draws every round's partial Fisher-Yates
 * shuffle of the eligible clients, in round order.
 */
public record CheckInSampling(
    int clients, int cohort, int minSeparation, int maxParticipations, long seed) {
  public CheckInSampling {
    Checks.atLeastOne("clients", clients);
    Checks.atLeastOne("cohort", cohort);
    Checks.atLeastOne("minSeparation", minSeparation);
    Checks.atLeastOne("maxParticipations", maxParticipations);
    if (cohort > clients) {
      throw new IllegalArgumentException(
          "cohort must be <= clients (" + clients + "), was " + cohort);
    }
  }

  /**
   * Who checks in: {@code cohorts[r - 1]} holds round r's clients, ascending; {@code
   * firstShortRound} is the first round with fewer than the cohort eligible (0: none).
   */
  public record Schedule(int[][] cohorts, int firstShortRound) {
    /** The clients of {@code round} (from 1). */
    public int[] cohort(long round) {
      return cohorts[Math.toIntExact(round - 1)];
    }

    /** How often each of {@code clients} contributes over the schedule. */
    public int[] participations(int clients) {
      int[] counts = new int[clients];
      for (int[] round : cohorts) {
        for (int c : round) {
          counts[c]++;
        }
      }
      return counts;
    }
  }

  /** Whether a client last in {@code lastRound} (0: never), {@code times} so far, may join. */
  public boolean eligible(long lastRound, int times, long round) {
    return times < maxParticipations && (lastRound == 0 || round - lastRound >= minSeparation);
  }

  /** The check-ins of rounds 1..{@code rounds}. */
  public Schedule schedule(int rounds) {
    Checks.atLeastOne("rounds", rounds);
    SplittableRandom random = new SplittableRandom(seed);
    long[] last = new long[clients];
    int[] times = new int[clients];
    int[] eligible = new int[clients];
    int[][] cohorts = new int[rounds][];
    int firstShort = 0;
    for (int r = 1; r <= rounds; r++) {
      int n = 0;
      for (int c = 0; c < clients; c++) {
        if (eligible(last[c], times[c], r)) {
          eligible[n++] = c;
        }
      }
      int take = Math.min(cohort, n);
      if (take < cohort && firstShort == 0) {
        firstShort = r;
      }
      // Partial Fisher-Yates: the first `take` slots become a uniform sample without replacement.
      for (int i = 0; i < take; i++) {
        int j = i + random.nextInt(n - i);
        int swap = eligible[i];
        eligible[i] = eligible[j];
        eligible[j] = swap;
      }
      int[] chosen = Arrays.copyOf(eligible, take);
      Arrays.sort(chosen);
      for (int c : chosen) {
        last[c] = r;
        times[c]++;
      }
      cohorts[r - 1] = chosen;
    }
    return new Schedule(cohorts, firstShort);
  }
}
