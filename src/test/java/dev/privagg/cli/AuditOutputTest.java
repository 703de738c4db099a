package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.audit.AuditReport;
import dev.privagg.audit.AuditReport.Estimate;
import dev.privagg.audit.CanaryScorer.Statistic;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The audit's verdict as people and machines read it. */
class AuditOutputTest {
  private static final double DELTA = 1e-5;

  /** 100 canaries a side: their f-DP bound refutes at most epsilon 3.31 at delta 1e-5. */
  private static AuditReport report(double claim, double equalSpreadLow, double fdp) {
    Estimate sum =
        new Estimate(
            Statistic.SUM, 1, 1, 0, 1, 5, 3, 9, 4, equalSpreadLow, Double.NaN, 0.2, fdp, 0.5, null);
    Estimate fin =
        new Estimate(Statistic.FINAL, 1, 1, 0, 1, 5, 3, 9, 4, 2, 4.5, 0.2, 0.1, 0.5, null);
    return new AuditReport(
        100,
        1000,
        8,
        DELTA,
        0.05,
        claim,
        AuditReport.refutableEpsilon(100, 0.05, DELTA),
        Statistic.SUM,
        List.of(sum, fin));
  }

  /** Claim 4 is beyond 100 canaries: the verdict says so and how many could refute it (207). */
  @Test
  void inconclusive_namesTheCapAndTheCanariesThatCouldRefuteTheClaim() {
    AuditReport r = report(4, 2.5, 0.3);
    assertThat(r.verdict()).isEqualTo(AuditReport.Verdict.INCONCLUSIVE);
    assertThat(AuditOutput.explain(r))
        .startsWith("INCONCLUSIVE: 100 canaries can refute at most epsilon 3.31")
        .contains("not the claimed 4")
        .contains("needs at least 207 canaries");
  }

  @Test
  void consistent_saysTheClaimWasRefutable() {
    AuditReport r = report(3, 2.5, 0.3);
    assertThat(r.verdict()).isEqualTo(AuditReport.Verdict.CONSISTENT);
    assertThat(AuditOutput.explain(r)).startsWith("consistent").contains("could have refuted");
  }

  @Test
  void estimateAboveClaim_namesTheLowEndAndItsAssumption() {
    AuditReport r = report(2, 2.5, 0.3);
    assertThat(r.verdict()).isEqualTo(AuditReport.Verdict.ESTIMATE_ABOVE_CLAIM);
    assertThat(AuditOutput.explain(r))
        .contains("low end (2.5) exceeds the claimed 2 with confidence 0.975")
        .contains("two normals of one spread");
  }

  @Test
  void json_carriesTheCapAndTheEqualSpreadFigures() {
    AuditReport r = report(4, 2.5, 0.3);
    Map<String, Object> fields = AuditOutput.fields(r, false);
    assertThat(fields).containsEntry("verdict", "INCONCLUSIVE").containsKey("refutableEpsilon");
    @SuppressWarnings("unchecked")
    Map<String, Object> row = ((List<Map<String, Object>>) fields.get("statistics")).get(0);
    assertThat(row).containsKeys("equalSpreadEpsilon", "equalSpreadEpsilonLow");
    StringWriter text = new StringWriter();
    AuditOutput.print(new PrintWriter(text), r);
    assertThat(text.toString()).contains("equal-spread [low]", "4.00 [2.50]");
  }

  @Test
  void help_listsEveryExitCode() {
    CliTest.Run run = CliTest.run("audit", "--help");
    assertThat(run.out().replaceAll("\\s+", " "))
        .contains("0 consistent")
        .contains("3 estimate above the claim")
        .contains("4 claim falsified")
        .contains("5 inconclusive")
        .contains("1 error");
  }
}
