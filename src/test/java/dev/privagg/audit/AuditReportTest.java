package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.audit.AuditReport.Estimate;
import dev.privagg.audit.AuditReport.Verdict;
import dev.privagg.audit.CanaryScorer.Scores;
import dev.privagg.audit.CanaryScorer.Statistic;
import dev.privagg.privacy.GaussianCalibration;
import java.util.List;
import org.apache.commons.statistics.distribution.NormalDistribution;
import org.junit.jupiter.api.Test;

class AuditReportTest {
  private static final double DELTA = 1e-5;

  /** n scores at the normal's quantiles (i + 1/2) / n: a sample without sampling noise. */
  private static double[] quantiles(double mean, double sd, int n) {
    NormalDistribution normal = NormalDistribution.of(mean, sd);
    double[] v = new double[n];
    for (int i = 0; i < n; i++) {
      v[i] = normal.inverseCumulativeProbability((i + 0.5) / n);
    }
    return v;
  }

  /**
   * Figures of one statistic: epsilon-hat and its interval's low end, the equal-spread estimate's
   * low end, Steinke's and the f-DP bound.
   */
  private static Estimate estimate(
      Statistic s, double hat, double low, double equalLow, double oneRun, double fdp) {
    return new Estimate(
        s, 1, 1, 0, 1, hat, low, hat * 2, hat, equalLow, Double.NaN, oneRun, fdp, 0.5, null);
  }

  /** A report whose f-DP bound could refute up to epsilon 5. */
  private static AuditReport report(double claim, Estimate headline) {
    return new AuditReport(
        100, 1000, 10, DELTA, 0.05, claim, 5, headline.statistic(), List.of(headline));
  }

  @Test
  void epsilonHat_ofTwoEqualSpreadGaussians_isTheirGaussianEpsilon_insideItsInterval() {
    double shift = 0.8;
    Estimate e =
        AuditReport.estimate(
            new Scores(Statistic.SUM, quantiles(shift, 1, 2000), quantiles(0, 1, 2000)),
            1000,
            DELTA,
            0.05);
    double truth = GaussianCalibration.gaussianEpsilon(1 / shift, DELTA);
    // The quantile samples' spreads are equal and a hair under 1, their means exact.
    assertThat(e.epsilonHat()).isCloseTo(truth, within(0.02 * truth));
    assertThat(e.epsilonHatLow()).isLessThan(e.epsilonHat());
    assertThat(e.epsilonHatHigh()).isGreaterThan(e.epsilonHat());
    assertThat(e.oneRunFdpEpsilon()).isGreaterThan(0).isLessThan(truth);
    assertThat(e.closedFormEpsilonHat()).isNaN();
    // The bootstrap is seeded: the same scores give the same interval.
    Estimate again =
        AuditReport.estimate(
            new Scores(Statistic.SUM, quantiles(shift, 1, 2000), quantiles(0, 1, 2000)),
            1000,
            DELTA,
            0.05);
    assertThat(again.epsilonHatLow()).isEqualTo(e.epsilonHatLow());
  }

  @Test
  void scoresWithoutSpread_separateCompletelyOrNotAtAll() {
    double[] same = {0.5, 0.5, 0.5};
    Estimate apart =
        AuditReport.estimate(
            new Scores(Statistic.MAX, same, new double[] {0, 0, 0}), 10, DELTA, 0.05);
    assertThat(apart.epsilonHat()).isInfinite();
    Estimate together =
        AuditReport.estimate(new Scores(Statistic.MAX, same, same.clone()), 10, DELTA, 0.05);
    assertThat(together.epsilonHat()).isZero();
  }

  @Test
  void verdict_readsTheEqualSpreadLowEnd_andOnlyTheFdpBound() {
    assertThat(report(4, estimate(Statistic.MAX, 5, 3, 3, 0.5, 1)).verdict())
        .as("estimates above the claim, their low ends not")
        .isEqualTo(Verdict.CONSISTENT);
    assertThat(report(4, estimate(Statistic.MAX, 6, 4.5, 4.5, 0.5, 1)).verdict())
        .isEqualTo(Verdict.ESTIMATE_ABOVE_CLAIM);
    assertThat(report(4, estimate(Statistic.MAX, 6, 4.5, 4.5, 0.5, 4.1)).verdict())
        .isEqualTo(Verdict.CLAIM_FALSIFIED);
    // Steinke's bound and epsilon-hat's interval are reported, not tested.
    assertThat(report(4, estimate(Statistic.MAX, 1, 0.5, 0.5, 4.2, 3.9)).verdict())
        .isEqualTo(Verdict.CONSISTENT);
    assertThat(report(4, estimate(Statistic.MAX, 9, 4.5, 3.9, 0.5, 1)).verdict())
        .as("epsilon-hat's interval above the claim, the equal-spread low end not")
        .isEqualTo(Verdict.CONSISTENT);
  }

  /**
   * A claim at or above what the f-DP bound could refute (5 here) is inconclusive unless a test
   * flags it: the audit could not have found it false.
   */
  @Test
  void verdict_onAClaimBeyondWhatTheCanariesCanRefute_isInconclusive() {
    assertThat(report(5, estimate(Statistic.SUM, 4, 3, 3, 0.5, 1)).verdict())
        .isEqualTo(Verdict.INCONCLUSIVE);
    assertThat(report(Double.POSITIVE_INFINITY, estimate(Statistic.SUM, 4, 3, 3, 0.5, 1)).verdict())
        .isEqualTo(Verdict.INCONCLUSIVE);
    assertThat(report(4.99, estimate(Statistic.SUM, 4, 3, 3, 0.5, 1)).verdict())
        .isEqualTo(Verdict.CONSISTENT);
    assertThat(report(6, estimate(Statistic.SUM, 9, 7, 6.5, 0.5, 1)).verdict())
        .as("the equal-spread test still flags")
        .isEqualTo(Verdict.ESTIMATE_ABOVE_CLAIM);
  }

  /**
   * The cap of the verdict's f-DP bound at delta 1e-5 and significance 0.05 (each test at 0.025):
   * 100 canaries a side refute at most 3.31, 1,000 at most 5.28. No scores beat perfect separation:
   * neither random ones with a large shift nor perfect separation but for one swapped pair.
   */
  @Test
  void refutableEpsilon_isTheBoundOfPerfectSeparation_andNoScoresBeatIt() {
    double cap100 = AuditReport.refutableEpsilon(100, 0.05, DELTA);
    assertThat(cap100).isCloseTo(3.3120, within(1e-3));
    assertThat(AuditReport.refutableEpsilon(1000, 0.05, DELTA)).isCloseTo(5.2782, within(1e-3));
    java.util.SplittableRandom random = new java.util.SplittableRandom(7);
    for (double shift : new double[] {2, 4, 8}) {
      double[] in = new double[100];
      double[] out = new double[100];
      for (int i = 0; i < 100; i++) {
        in[i] = shift + random.nextGaussian();
        out[i] = random.nextGaussian();
      }
      assertThat(new OneRunAudit(in, out).oneRunFdpFixedUnion(0.025, DELTA).epsilon())
          .as("shift %s", shift)
          .isLessThanOrEqualTo(cap100);
    }
    double[] in = new double[100];
    double[] out = new double[100];
    for (int i = 0; i < 100; i++) {
      in[i] = 100 + i;
      out[i] = i;
    }
    in[0] = -1;
    assertThat(new OneRunAudit(in, out).oneRunFdpFixedUnion(0.025, DELTA).epsilon())
        .isLessThan(cap100);
  }

  /** The fewest canaries whose cap passes a claim: one fewer falls short. */
  @Test
  void canariesToRefute_isTheFewestWhoseCapPassesTheClaim() {
    int needed = AuditReport.canariesToRefute(4, 0.05, DELTA);
    assertThat(AuditReport.refutableEpsilon(needed, 0.05, DELTA)).isGreaterThan(4);
    assertThat(AuditReport.refutableEpsilon(needed - 1, 0.05, DELTA)).isLessThanOrEqualTo(4);
    assertThat(AuditReport.canariesToRefute(50, 0.05, DELTA)).isEqualTo(-1);
  }

  @Test
  void theHeadline_isTheStatisticTheVerdictReads() {
    AuditReport r =
        new AuditReport(
            100,
            1000,
            10,
            DELTA,
            0.05,
            2,
            5,
            Statistic.SUM,
            List.of(
                estimate(Statistic.MAX, 9, 9, 9, 9, 9),
                estimate(Statistic.SUM, 1, 0.5, 0.5, 0, 0)));
    assertThat(r.headlineEstimate().statistic()).isEqualTo(Statistic.SUM);
    assertThat(r.verdict()).isEqualTo(Verdict.CONSISTENT);
  }
}
