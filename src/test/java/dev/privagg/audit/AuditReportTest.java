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

  private static Estimate estimate(Statistic s, double hat, double low, double oneRun, double fdp) {
    return new Estimate(s, 1, 1, 0, 1, hat, low, hat * 2, Double.NaN, oneRun, fdp, 0.5, null);
  }

  private static AuditReport report(double claim, Estimate headline) {
    return new AuditReport(
        100, 1000, 10, DELTA, 0.05, claim, headline.statistic(), List.of(headline));
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
  void verdict_readsTheIntervalsLowEnd_andOnlyTheFdpBound() {
    assertThat(report(4, estimate(Statistic.MAX, 5, 3, 0.5, 1)).verdict())
        .as("epsilon-hat above the claim, its interval not")
        .isEqualTo(Verdict.CONSISTENT);
    assertThat(report(4, estimate(Statistic.MAX, 6, 4.5, 0.5, 1)).verdict())
        .isEqualTo(Verdict.ESTIMATE_ABOVE_CLAIM);
    assertThat(report(4, estimate(Statistic.MAX, 6, 4.5, 0.5, 4.1)).verdict())
        .isEqualTo(Verdict.CLAIM_FALSIFIED);
    // Steinke's bound is reported, not tested: the verdict makes one test.
    assertThat(report(4, estimate(Statistic.MAX, 1, 0.5, 4.2, 3.9)).verdict())
        .isEqualTo(Verdict.CONSISTENT);
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
            Statistic.SUM,
            List.of(estimate(Statistic.MAX, 9, 9, 9, 9), estimate(Statistic.SUM, 1, 0.5, 0, 0)));
    assertThat(r.headlineEstimate().statistic()).isEqualTo(Statistic.SUM);
    assertThat(r.verdict()).isEqualTo(Verdict.CONSISTENT);
  }
}
