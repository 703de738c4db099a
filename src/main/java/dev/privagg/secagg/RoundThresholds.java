package dev.privagg.secagg;

import java.util.Optional;

/**
 * The neighbourhood size k and Shamir threshold t a round's roster of n clients gets, privacy
 * first: every share a server can collect counts, the target's own included, and unmasking must
 * survive one client more than the declared rates allow, so that one client's presence or behaviour
 * switches a round between "sum plus noise" and "noise alone" only with a stated probability.
 *
 * <p>Counts: A = floor(adversarialClientRate n) colluders, D = floor(estimatedDropoutRate n)
 * dropouts. For a target u with neighbourhood N(u) of k holders (u included):
 *
 * <ul>
 *   <li><b>Security against two survivor lists.</b> A lying server shows some of u's neighbours a
 *       list with u surviving (they reveal shares of u's self-mask seed) and the rest one with u
 *       dropped (shares of u's mask key); each honest neighbour answers one list, u answers only
 *       the first (its own share is of the seed), the a colluders among the k - 1 others give both.
 *       It gets t shares of both iff 1 + h1 + a >= t and h2 + a >= t with h1 + h2 <= k - 1 - a,
 *       that is iff k + a >= 2t. So t = ceil((k + t1 + 1) / 2), where a <= t1 except with
 *       probability 2^-41 / n (a hypergeometric draw of the k - 1 others from the n - 1 clients
 *       besides u); a union bound over the n targets gives 2^-41. (FCP's semi-malicious rule, t - 1
 *       = ceil((t1 + k - 2.25) / 2), allows 2t = k + t1 and so exposes u whenever a = t1.) This is
 *       two lists; a server that shows every holder a list of its own can instead gather u's seed
 *       and the mask keys of u's honest partners (each "dropped" in its own holders' lists), which
 *       no threshold stops: the consistency round does ({@link #signatureThreshold}).
 *   <li><b>Security of the sum's parts.</b> The honest survivors stay connected once the A + D
 *       colluding and dropped clients are removed, except with probability 2^-41 (FCP's bound).
 *   <li><b>Correctness with a margin.</b> Unmasking needs t good shares of each secret it
 *       reconstructs. The holders that may fail to give one are the declared dropouts, colluders
 *       that withhold or lie included (maxDropoutRate covers every client that fails to answer,
 *       whatever the reason), and one client more (the client whose presence two neighbouring
 *       worlds differ by): L = D + 1 of the n. The number of them among a secret's k holders is a
 *       hypergeometric draw; t <= k - x - (r + 1) where it exceeds x with probability below 2^-40 /
 *       n, so every secret of the round has t good shares except with probability 2^-40, given that
 *       no more than L fail: r + 1 is the most rejections of its shares a dealer stays in the round
 *       with ({@link ShareConfirmation#toleratedRejections}), its r colluding holders and the one
 *       client neighbouring worlds differ by, each of which would otherwise withhold a share too.
 *       That condition is the operator's to meet: a dropout rate declared at the real mean is
 *       exceeded in about half of the rounds.
 * </ul>
 *
 * <p>The complete graph (k = n) needs no probability: 2t >= n + A + 1 and t <= n - L - (A + 1) hold
 * for every placement. The sparse Harary graph is tried first (smallest degree that satisfies all
 * three bounds), the complete graph for cohorts too small for one. The placement of colluders must
 * be random for the sparse bounds to hold: the graph's permutation is derived from the roster
 * ({@link RosterPermutation}), not chosen by the server.
 *
 * <p>Against {@link ThreatModel.AdversaryClass#CURIOUS_SERVER} (which follows the protocol and asks
 * one list) the security rule is t > a: t = t1 + 1.
 */
public final class RoundThresholds {
  /** The largest roster the search covers (FCP's range). */
  public static final int MAX_NUMBER_OF_CLIENTS = 1_000_000;

  /** log2 of the bound on P[a round's release exposes some honest client's input]. */
  public static final int SECURITY_BITS = 40;

  /**
   * log2 of the bound on P[a round fails to unmask] when no more than the declared colluders and
   * dropouts, and one client more, fail to answer: the term each secure round adds to delta.
   */
  public static final int CORRECTNESS_BITS = 40;

  /** A rate times n that should be an integer must not round down in the insecure direction. */
  private static final double ROUNDING_SLACK = 1e-14;

  /**
   * The asymptotic limits of the rules above, with FCP's 0.1 of slack: t must lie between (1 + α) k
   * / 2 and (1 - α - δ) k against a semi-malicious server, between α k and (1 - α - δ) k against a
   * curious one.
   */
  private static final double MAX_LOST_FRACTION = 0.9;

  /** Rates that add up to the limit in decimal (3 * 0.2 + 2 * 0.15) may exceed it in binary. */
  private static final double RATE_SLACK = 1e-12;

  private RoundThresholds() {}

  /**
   * A roster's graph: k holders per neighbourhood (n for the complete graph), threshold t, and the
   * rejection limit r: a client whose shares more than r neighbours reject, or who rejects more
   * than r, is lying (an honest client's neighbourhood holds at most r colluders but for 2^-41 /
   * n), and leaves the round before anyone masks with it ({@link ShareConfirmation}).
   */
  public record Choice(int neighbourhoodSize, int threshold, boolean complete, int rejectionLimit) {
    public Choice {
      if (rejectionLimit < 0) {
        throw new IllegalArgumentException("rejectionLimit must be >= 0, was " + rejectionLimit);
      }
    }
  }

  /**
   * Checks that the rates leave room for a threshold at large cohorts; the message names the rule.
   */
  public static void checkRates(ThreatModel threat) {
    double a = threat.adversarialClientRate();
    double d = threat.estimatedDropoutRate();
    switch (threat.adversaryClass()) {
      case SEMI_MALICIOUS_SERVER -> {
        if (!(3 * a + 2 * d <= MAX_LOST_FRACTION + RATE_SLACK)) {
          throw new IllegalArgumentException(
              "3 * adversarialClientRate + 2 * maxDropoutRate must be <= "
                  + MAX_LOST_FRACTION
                  + " against a semi-malicious server (t above (1 + a) k / 2 and below (1 - a -"
                  + " d) k), was 3 * "
                  + a
                  + " + 2 * "
                  + d);
        }
      }
      case CURIOUS_SERVER -> {
        if (!(2 * a + d <= MAX_LOST_FRACTION + RATE_SLACK)) {
          throw new IllegalArgumentException(
              "2 * adversarialClientRate + maxDropoutRate must be <= "
                  + MAX_LOST_FRACTION
                  + " against a curious server (t above a k and below (1 - a - d) k), was 2 * "
                  + a
                  + " + "
                  + d);
        }
      }
      case NONE -> {
        if (!(d <= MAX_LOST_FRACTION + RATE_SLACK)) {
          throw new IllegalArgumentException(
              "maxDropoutRate must be <= " + MAX_LOST_FRACTION + ", was " + d);
        }
      }
    }
  }

  /**
   * The graph for a roster of {@code n}: the sparse Harary graph of the smallest degree that meets
   * the three bounds, else the complete graph at the smallest threshold its rules allow; empty when
   * neither exists (n below the rates' smallest feasible roster, or rates {@link #checkRates}
   * refuses).
   */
  public static Optional<Choice> choose(int n, ThreatModel threat) {
    if (n < 2 || n > MAX_NUMBER_OF_CLIENTS) {
      return Optional.empty();
    }
    checkRates(threat);
    if (signatureThreshold(n, threat) > n - lost(n, threat)) {
      return Optional.empty(); // the consistency round could fail with no more than L failing
    }
    for (int degree = 2; degree < n - 1; degree += 2) {
      Optional<Choice> sparse = sparse(n, degree, threat);
      if (sparse.isPresent()) {
        return sparse;
      }
    }
    int t = completeThreshold(n, threat);
    return t > 0 ? Optional.of(new Choice(n, t, true, colluders(n, threat))) : Optional.empty();
  }

  /**
   * T: the valid signatures on one survivor statement a client needs before it reveals a share
   * ({@link SurvivorStatement}), floor((n + A) / 2) + 1. Each honest client signs one statement, so
   * two statements with T signers each would need h1 + A >= T and h2 + A >= T with h1 + h2 <= n -
   * A, that is 2T <= n + A: with this T at most one statement is ever answered, whatever each
   * client was shown (Bonawitz et al., CCS 2017, Section 4, with their t > (n + A) / 2 as the count
   * of signatures rather than of shares, so that sparse graphs keep their small t).
   */
  public static int signatureThreshold(int n, ThreatModel threat) {
    // A curious server shows everyone the one list it has, by assumption: any signature will do.
    return threat.adversaryClass() == ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER
        ? (n + colluders(n, threat)) / 2 + 1
        : 1;
  }

  /** Up to here feasibility is checked size by size; beyond it the rates' limits hold. */
  private static final int FEASIBILITY_SCAN = 2000;

  /**
   * The smallest roster from which on every roster gets a graph: below it a round cannot always be
   * unmasked within the declared rates, so whether it is attempted must be decided privately (a
   * noisy count). Feasibility is not monotone (at rates 0.3 and 0.1 against a semi-malicious
   * server, 9 clients get a graph and 10 do not), so this is one more than the largest roster
   * without one.
   */
  public static int smallestRoster(ThreatModel threat) {
    return SMALLEST_ROSTERS.computeIfAbsent(threat, RoundThresholds::scanForSmallestRoster);
  }

  /** A scan costs a few hundred milliseconds; a job asks at every release. */
  private static final java.util.Map<ThreatModel, Integer> SMALLEST_ROSTERS =
      new java.util.concurrent.ConcurrentHashMap<>();

  private static int scanForSmallestRoster(ThreatModel threat) {
    int lastWithout = 1;
    for (int n = 2; n <= FEASIBILITY_SCAN; n++) {
      if (choose(n, threat).isEmpty()) {
        lastWithout = n;
      }
    }
    if (lastWithout == FEASIBILITY_SCAN) {
      throw new IllegalArgumentException(
          "rosters of " + FEASIBILITY_SCAN + " clients get no graph at " + threat);
    }
    return lastWithout + 1;
  }

  /**
   * log2 of the union bound on P[some honest client of a roster of n has a + k >= 2t] (a the
   * colluders among its k - 1 other holders), against a semi-malicious server; negative infinity
   * for the complete graph, where it cannot happen.
   */
  public static double log2TwoListExposureBound(int n, Choice choice, ThreatModel threat) {
    if (choice.complete()) {
      return Double.NEGATIVE_INFINITY;
    }
    int k = choice.neighbourhoodSize();
    int reach = 2 * choice.threshold() - k; // colluders that would complete both secrets
    return log2(n, upperTail(n - 1, colluders(n, threat), k - 1, reach));
  }

  /**
   * log2 of the union bound on P[some secret of a roster of n has fewer than t answering holders]
   * when D + 1 clients fail to answer and r + 1 of the secret's holders rejected its shares (the
   * most {@link ShareConfirmation} keeps a dealer with); negative infinity for the complete graph.
   */
  public static double log2UnmaskingFailureBound(int n, Choice choice, ThreatModel threat) {
    int spare =
        choice.neighbourhoodSize()
            - choice.threshold()
            - ShareConfirmation.toleratedRejections(choice.rejectionLimit());
    if (choice.complete()) {
      return spare >= lost(n, threat) ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    return log2(n, upperTail(n, lost(n, threat), choice.neighbourhoodSize(), spare + 1));
  }

  /**
   * P[X >= atLeast] for X marked items in a draw of {@code sampled} of {@code total} holding {@code
   * marked}, summed as the lower tail of the unmarked count so that tiny tails keep their digits.
   */
  private static double upperTail(int total, int marked, int sampled, int atLeast) {
    if (atLeast <= 0) {
      return 1;
    }
    return new HypergeometricDistribution(total, total - marked, sampled).cdf(sampled - atLeast);
  }

  /** log2(n p): a union bound over n clients. */
  private static double log2(int n, double p) {
    return (Math.log(n) + Math.log(p)) / Math.log(2);
  }

  /** The Harary graph of this degree with its threshold, or empty when no t meets the bounds. */
  private static Optional<Choice> sparse(int n, int degree, ThreatModel threat) {
    double perTargetSecurity = Math.pow(2, -(SECURITY_BITS + 1)) / n;
    if (logProbabilityOfDisconnection(n, degree, threat) >= -(SECURITY_BITS + 1) * Math.log(2)) {
      return Optional.empty();
    }
    int k = degree + 1;
    int t1 =
        new HypergeometricDistribution(n - 1, colluders(n, threat), degree)
            .complementQuantile(perTargetSecurity);
    int lowest =
        threat.adversaryClass() == ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER
            ? ceilHalf(k + t1 + 1)
            : t1 + 1;
    int missing =
        new HypergeometricDistribution(n, lost(n, threat), k)
            .complementQuantile(Math.pow(2, -CORRECTNESS_BITS) / n);
    int highest = k - missing - ShareConfirmation.toleratedRejections(t1);
    int t = Math.max(lowest, 2);
    return t <= highest ? Optional.of(new Choice(k, t, false, t1)) : Optional.empty();
  }

  /** t for the complete graph of n, or 0 when none meets its rules. */
  private static int completeThreshold(int n, ThreatModel threat) {
    int a = colluders(n, threat);
    int lowest =
        switch (threat.adversaryClass()) {
          case SEMI_MALICIOUS_SERVER -> ceilHalf(n + a + 1);
          case CURIOUS_SERVER -> a + 1;
          case NONE -> 2;
        };
    int t = Math.max(lowest, 2);
    return t <= n - lost(n, threat) - ShareConfirmation.toleratedRejections(a) ? t : 0;
  }

  /** A: the colluders a roster of n may hold. */
  static int colluders(int n, ThreatModel threat) {
    return (int) Math.floor((threat.adversarialClientRate() + ROUNDING_SLACK) * n);
  }

  /** L = D + 1, at most n: holders that may not answer, the margin client included. */
  static int lost(int n, ThreatModel threat) {
    int dropouts = (int) Math.floor((threat.estimatedDropoutRate() + ROUNDING_SLACK) * n);
    return Math.min(n, dropouts + 1);
  }

  private static int ceilHalf(int x) {
    return (x + 1) / 2;
  }

  /**
   * A union bound on ln P[the Harary graph minus the A + D colluding and dropped clients is
   * disconnected] (FCP's): that takes degree / 2 consecutive ring positions lost in two places.
   */
  private static double logProbabilityOfDisconnection(int n, int degree, ThreatModel threat) {
    int maxLost =
        colluders(n, threat)
            + (int) Math.floor((threat.estimatedDropoutRate() + ROUNDING_SLACK) * n);
    if (degree > maxLost) {
      return Double.NEGATIVE_INFINITY;
    }
    double logNumberOfGapPairs = Math.log(n) + Math.log(n - degree - 1) - Math.log(2);
    return logNumberOfGapPairs + new HypergeometricDistribution(n, maxLost, degree).logPmf(degree);
  }
}
