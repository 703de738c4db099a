package dev.privagg.audit;

import dev.privagg.audit.AuditReport.Estimate;
import dev.privagg.audit.AuditReport.Verdict;
import dev.privagg.audit.CanaryScorer.Scores;
import dev.privagg.audit.CanaryScorer.Statistic;
import dev.privagg.privacy.GaussianCalibration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Audits of correct jobs without the job: the canaries' scores drawn as a Gaussian mechanism makes
 * them. Each round a canary's cosine with the model delta is N(0, 1) in units of its spread, plus 1
 * / zCanary for an inserted canary (its C against the noise z C and the other updates' projections,
 * sqrt(z^2 + (K - 1 + clients) / d) C together, as AuditCalibrationTest derives); every canary
 * takes part in every round. The ledger states the exact epsilon of the T-fold composition at the
 * job's own z, so the canaries' separation sqrt(T) / zCanary is at most the claim's sqrt(T) / z,
 * and equal to it when nothing but the noise hides a canary (zCanary = z), the case where an honest
 * job is flagged most often.
 */
final class HonestAudits {
  private HonestAudits() {}

  /**
   * A correct job: {@code canaries} inserted and as many unseen, {@code rounds} rounds at noise
   * multiplier {@code z}, the canaries hidden by {@code zCanary >= z}.
   */
  record Setting(int canaries, int rounds, double z, double zCanary, double delta) {
    /** What the job's ledger states: the T-fold composition's exact epsilon. */
    double ledgerEpsilon() {
      return GaussianCalibration.gaussianEpsilon(z / Math.sqrt(rounds), delta);
    }

    /** What the canaries can show at most: the epsilon of their own separation. */
    double canaryEpsilon() {
      return GaussianCalibration.gaussianEpsilon(zCanary / Math.sqrt(rounds), delta);
    }
  }

  /** How many runs got each verdict, and how often the rule before the fix flagged one. */
  record Tally(
      int runs,
      Map<Verdict, Integer> verdicts,
      int oldRuleFlags,
      double meanEpsilonHat,
      double meanEqualSpreadEpsilon) {
    /** Runs the verdict flagged: exit 3 or 4. */
    int flagged() {
      return verdicts.get(Verdict.ESTIMATE_ABOVE_CLAIM) + verdicts.get(Verdict.CLAIM_FALSIFIED);
    }
  }

  /**
   * {@code runs} audits of the {@code headline} score of correct jobs of {@code setting} at {@code
   * significance}, from {@code seed}. The old rule is the verdict before equal spreads:
   * epsilon-hat's bootstrap interval above the claim (the f-DP part of it never fired in these
   * runs, below).
   */
  static Tally run(Setting setting, Statistic headline, double significance, int runs, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    double claim = setting.ledgerEpsilon();
    double refutable =
        AuditReport.refutableEpsilon(setting.canaries(), significance, setting.delta());
    Map<Verdict, Integer> verdicts = new EnumMap<>(Verdict.class);
    for (Verdict v : Verdict.values()) {
      verdicts.put(v, 0);
    }
    int old = 0;
    double sumHat = 0;
    double sumEqual = 0;
    for (int run = 0; run < runs; run++) {
      Scores scores = scores(setting, headline, random);
      Estimate e = AuditReport.estimate(scores, 2000, setting.delta(), significance);
      AuditReport report =
          new AuditReport(
              setting.canaries(),
              2000,
              setting.rounds(),
              setting.delta(),
              significance,
              claim,
              refutable,
              headline,
              List.of(e));
      verdicts.merge(report.verdict(), 1, Integer::sum);
      if (e.epsilonHatLow() > claim) {
        old++;
      }
      sumHat += e.epsilonHat();
      sumEqual += e.equalSpreadEpsilon();
    }
    return new Tally(runs, verdicts, old, sumHat / runs, sumEqual / runs);
  }

  /** One run's scores: the sum or the max over rounds of each canary's cosine. */
  static Scores scores(Setting setting, Statistic statistic, SplittableRandom random) {
    if (statistic == Statistic.FINAL) {
      throw new IllegalArgumentException("the final score is the sum's, up to a common factor");
    }
    double shift = 1 / setting.zCanary();
    double[] inserted = new double[setting.canaries()];
    double[] unseen = new double[setting.canaries()];
    for (int i = 0; i < setting.canaries(); i++) {
      inserted[i] = combine(statistic, setting.rounds(), shift, random);
      unseen[i] = combine(statistic, setting.rounds(), 0, random);
    }
    return new Scores(statistic, inserted, unseen);
  }

  private static double combine(
      Statistic statistic, int rounds, double shift, SplittableRandom random) {
    double sum = 0;
    double max = Double.NEGATIVE_INFINITY;
    for (int r = 0; r < rounds; r++) {
      double cosine = shift + random.nextGaussian();
      sum += cosine;
      max = Math.max(max, cosine);
    }
    return statistic == Statistic.SUM ? sum : max;
  }
}
