package dev.privagg.audit;

import dev.privagg.audit.AuditReport.Verdict;
import dev.privagg.audit.CanaryScorer.Statistic;
import java.util.Locale;
import org.apache.commons.statistics.distribution.BetaDistribution;
import org.junit.jupiter.api.Test;

/**
 * The measurement behind the false-alarm table of docs/evaluation.md, not part of the suite (the
 * name does not end in Test): audits of correct jobs ({@link HonestAudits}) at the recommended
 * canary counts, each verdict's share, and the Clopper-Pearson 95% upper limit of the flagged share
 * (exit 3 or 4). Runs per setting from -Dprivagg.audit.runs (default 1000), the verdict's
 * significance from -Dprivagg.audit.significance (default 0.05):
 *
 * <pre>
 * mvn -B -o test-compile surefire:test -Dtest=AuditFalseAlarmRates -Dprivagg.audit.runs=1000
 * </pre>
 */
class AuditFalseAlarmRates {
  private static final int[] CANARIES = {100, 250, 500, 1000};
  private static final double SIGNIFICANCE =
      Double.parseDouble(System.getProperty("privagg.audit.significance", "0.05"));
  private static final int ROUNDS = 8;

  @Test
  void printTheTable() {
    int runs = Integer.getInteger("privagg.audit.runs", 1000);
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "%d runs per row, %d rounds, canaries in every round, significance %s%n%n",
            runs,
            ROUNDS,
            SIGNIFICANCE));
    out.append(
        "| score | z | hidden by | delta | claim | canaries' own | K | refutable | consistent |"
            + " inconclusive | exit 3 | exit 4 | flagged (95% upper) | old rule | mean epsilon-hat"
            + " | mean equal-spread |\n");
    out.append("|" + " --- |".repeat(16) + "\n");
    long seed = 1;
    for (Statistic statistic : new Statistic[] {Statistic.SUM, Statistic.MAX}) {
      for (double delta : new double[] {1e-5, 1e-6}) {
        for (double z : new double[] {2.0008, 4}) {
          // The max score only where the sum score is flagged most: nothing but the noise.
          for (double hiddenBy :
              statistic == Statistic.SUM ? new double[] {1, 1.1175} : new double[] {1}) {
            if (statistic == Statistic.MAX && delta != 1e-5) {
              continue;
            }
            for (int k : CANARIES) {
              row(
                  out,
                  statistic,
                  new HonestAudits.Setting(k, ROUNDS, z, z * hiddenBy, delta),
                  runs,
                  seed++);
              System.out.print(out);
              out.setLength(0);
            }
          }
        }
      }
    }
  }

  private static void row(
      StringBuilder out, Statistic statistic, HonestAudits.Setting s, int runs, long seed) {
    HonestAudits.Tally t = HonestAudits.run(s, statistic, SIGNIFICANCE, runs, seed);
    int k = s.canaries();
    out.append(
        String.format(
            Locale.ROOT,
            "| %s | %s | %.4g z | %s | %.2f | %.2f | %d | %.2f | %s | %s | %s | %s | %s (%s) | %s |"
                + " %.2f | %.2f |%n",
            statistic.label(),
            s.z(),
            s.zCanary() / s.z(),
            s.delta(),
            s.ledgerEpsilon(),
            s.canaryEpsilon(),
            k,
            AuditReport.refutableEpsilon(k, SIGNIFICANCE, s.delta()),
            percent(t.verdicts().get(Verdict.CONSISTENT), runs),
            percent(t.verdicts().get(Verdict.INCONCLUSIVE), runs),
            percent(t.verdicts().get(Verdict.ESTIMATE_ABOVE_CLAIM), runs),
            percent(t.verdicts().get(Verdict.CLAIM_FALSIFIED), runs),
            percent(t.flagged(), runs),
            upper95(t.flagged(), runs),
            percent(t.oldRuleFlags(), runs),
            t.meanEpsilonHat(),
            t.meanEqualSpreadEpsilon()));
  }

  private static String percent(int count, int runs) {
    return String.format(Locale.ROOT, "%.1f%%", 100.0 * count / runs);
  }

  /** The one-sided Clopper-Pearson 95% upper limit of a rate with k events in n runs. */
  private static String upper95(int k, int n) {
    double upper =
        k >= n ? 1 : BetaDistribution.of(k + 1.0, n - k).inverseSurvivalProbability(0.05);
    return String.format(Locale.ROOT, "%.1f%%", 100 * upper);
  }
}
