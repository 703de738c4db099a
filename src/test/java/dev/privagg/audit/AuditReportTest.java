package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.audit.AuditReport.Verdict;
import dev.privagg.audit.CanaryScorer.Scores;
import dev.privagg.audit.CanaryScorer.Statistic;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The verdict's error rate: what it reads and at which significance. */
class AuditReportTest {
  private static final double DELTA = 1e-5;
  private static final double SIGNIFICANCE = 0.05;

  /** 40 inserted canaries, 34 of them above every one of the 40 unseen ones. */
  private static Scores separated() {
    double[] in = new double[40];
    double[] out = new double[40];
    for (int i = 0; i < 40; i++) {
      in[i] = i < 34 ? 10 + i : -i;
      out[i] = -0.5 - i;
    }
    return new Scores(Statistic.MAX, in, out);
  }

  private static AuditReport report(AuditReport.Estimate e, double claim) {
    return new AuditReport(40, 100, 5, DELTA, SIGNIFICANCE, claim, Statistic.MAX, List.of(e));
  }

  /**
   * Either bound above the claim falsifies it, so each is taken at half the significance: with both
   * at the full significance a correct claim would be called falsified with probability up to twice
   * the stated one (the union of two tests).
   */
  @Test
  void verdict_readsTwoBounds_eachAtHalfTheSignificance() {
    Scores scores = separated();
    OneRunAudit audit = new OneRunAudit(scores.inserted(), scores.unseen());
    double steinkeFull = audit.epsilonOneRun(SIGNIFICANCE, DELTA);
    double fdpFull = audit.epsilonOneRunFdp(SIGNIFICANCE, DELTA);
    double steinkeHalf = audit.epsilonOneRun(SIGNIFICANCE / 2, DELTA);
    double fdpHalf = audit.epsilonOneRunFdp(SIGNIFICANCE / 2, DELTA);

    AuditReport.Estimate e = AuditReport.estimate(scores, 100, DELTA, SIGNIFICANCE);

    assertThat(e.oneRunEpsilon()).isEqualTo(steinkeHalf);
    assertThat(e.oneRunFdpEpsilon()).isEqualTo(fdpHalf);
    double atHalf = Math.max(steinkeHalf, fdpHalf);
    double atFull = Math.max(steinkeFull, fdpFull);
    assertThat(atFull).isGreaterThan(atHalf);
    // A claim between the two: only the union's own error rate may falsify it.
    double claim = (atHalf + atFull) / 2;
    assertThat(report(e, claim).verdict()).isNotEqualTo(Verdict.CLAIM_FALSIFIED);
    assertThat(report(e, atHalf * 0.99).verdict()).isEqualTo(Verdict.CLAIM_FALSIFIED);
  }
}
