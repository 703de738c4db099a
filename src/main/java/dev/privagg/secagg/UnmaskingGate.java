package dev.privagg.secagg;

import org.apache.commons.statistics.distribution.NormalDistribution;

/**
 * Whether a secure round attempts to unmask is a noisy count of its masked inputs against {@code
 * count} (the spec's {@code rounds.minimumCohort}, charged with the sum), so that no client's
 * presence switches a round between "sum plus noise" and "noise alone" except with a stated
 * probability (design.md invariant 12).
 *
 * <p>The argument. Let n0 be the smallest roster that gets a graph ({@link
 * RoundThresholds#smallestRoster}). A round that attempts unmasking fails only if (a) fewer than n0
 * clients sent a masked input, which the gate lets through with probability at most P[n0 - 1 + N(0,
 * noiseStd^2) >= count] = Q((count - n0 + 1) / noiseStd), or (b) more clients fail to answer than
 * the declared dropout rate plus one, or (c) a larger roster's graph fails within those, which
 * {@link RoundThresholds} bounds by 2^-40. Outside (b), which is not covered, the release equals
 * that of an ideal mechanism that post-processes the noisy count and the noisy sum, except with
 * probability {@code beta} = Q(...) + 2^-40 per round; over R rounds the (epsilon, delta) of the
 * ideal mechanism becomes (epsilon, delta + (1 + e^epsilon) R beta) ({@code
 * dev.privagg.privacy.SecureFailureDelta}).
 *
 * <p>The spec is refused unless Q(...) <= 2^-40, so beta <= 2^-39.
 */
public final class UnmaskingGate {
  /** log2 of the largest probability the gate may pass a roster too small for a graph. */
  public static final int GATE_BITS = 40;

  /** Q^-1(2^-40): the standard normal deviate a too-small roster's count must not reach. */
  public static final double DEVIATE =
      NormalDistribution.of(0, 1).inverseSurvivalProbability(Math.pow(2, -GATE_BITS));

  private UnmaskingGate() {}

  /**
   * The smallest count, in hundredths, whose gate passes a roster below the smallest graph with
   * probability at most 2^-40.
   */
  public static double minimumCount(ThreatModel threat, double noiseStd) {
    double exact = RoundThresholds.smallestRoster(threat) - 1 + DEVIATE * noiseStd;
    return Math.ceil(100 * exact - 1e-9) / 100;
  }

  /**
   * A gate for rounds of about {@code expectedCount} masked inputs: the largest noiseStd (two
   * decimals, at least 0.01) whose count {@link #minimumCount} lies three noise stds below the
   * expected count, so such a round is withheld with probability about 0.1%. Larger noise costs
   * less epsilon and withholds more rounds.
   */
  public static double suggestedNoiseStd(ThreatModel threat, int expectedCount) {
    double room = expectedCount - (RoundThresholds.smallestRoster(threat) - 1);
    return Math.max(0.01, Math.floor(100 * room / (DEVIATE + 3)) / 100);
  }

  /**
   * The gate {@link #suggestedNoiseStd} picks for rounds of about {@code expectedCount}, as a spec
   * writes {@code rounds.minimumCohort}: {@code {count: 28.65, noiseStd: 3.78}}.
   */
  public static String suggestedSpec(ThreatModel threat, int expectedCount) {
    double std = suggestedNoiseStd(threat, expectedCount);
    return spec(minimumCount(threat, std), std);
  }

  /** {@code {count: C, noiseStd: S}}, each number as a spec would write it (3, 2.36). */
  public static String spec(double count, double noiseStd) {
    return "{count: " + plain(count) + ", noiseStd: " + plain(noiseStd) + "}";
  }

  private static String plain(double x) {
    return java.math.BigDecimal.valueOf(x).stripTrailingZeros().toPlainString();
  }

  /**
   * beta: the probability that a round whose other clients stay within the declared rates is
   * released differently than the ideal mechanism would: the gate passing a roster too small for a
   * graph, plus the graph failing with one client beyond the declared dropouts.
   */
  public static double failureProbability(ThreatModel threat, double count, double noiseStd) {
    if (!(noiseStd > 0 && Double.isFinite(noiseStd))) {
      throw new IllegalArgumentException("noiseStd must be > 0 and finite, was " + noiseStd);
    }
    int tooSmall = RoundThresholds.smallestRoster(threat) - 1;
    double gate = NormalDistribution.of(0, 1).survivalProbability((count - tooSmall) / noiseStd);
    return gate + Math.pow(2, -RoundThresholds.CORRECTNESS_BITS);
  }

  /**
   * The fewest masked inputs an unmasked round holds but with probability {@link
   * #belowFewestProbability} (at most 2^-40): the largest M0 with Q((count - M0 + 1) / noiseStd) <=
   * 2^-40.
   */
  public static int fewestMaskedInputs(double count, double noiseStd) {
    return (int) Math.floor(count + 1 - DEVIATE * noiseStd);
  }

  /** P[the gate passes fewer than {@link #fewestMaskedInputs} masked inputs], at most 2^-40. */
  public static double belowFewestProbability(double count, double noiseStd) {
    int fewest = fewestMaskedInputs(count, noiseStd);
    return NormalDistribution.of(0, 1).survivalProbability((count - fewest + 1) / noiseStd);
  }

  /**
   * The fewest honest clients among M0 = {@link #fewestMaskedInputs} masked inputs: when at most
   * the declared dropouts and one more fail, a roster of n leaves M >= n - floor(d n) - 1 inputs,
   * so n <= (M + 1) / (1 - d), and holds at most a (M + 1) / (1 - d) colluders; M less that is
   * nondecreasing in M, so M0 less it bounds every passing round. 0 or less: no bound.
   */
  /**
   * The honest clients among {@code maskedInputs} of a roster of {@code roster}: all but the
   * colluders the roster may hold. A client checks it against its plan's noise shares before it
   * signs a survivor list: a lying job that runs a round of too few clients, gate or not, gets no
   * signature and no shares, so it cannot unmask inputs whose shares were sized for more.
   */
  public static int honestInputsAtLeast(ThreatModel threat, int roster, int maskedInputs) {
    return maskedInputs - RoundThresholds.colluders(roster, threat);
  }

  public static int fewestHonestInputs(ThreatModel threat, double count, double noiseStd) {
    int fewest = fewestMaskedInputs(count, noiseStd);
    double roster = (fewest + 1) / (1 - threat.estimatedDropoutRate());
    return fewest - (int) Math.floor(threat.adversarialClientRate() * roster + 1e-12);
  }
}
