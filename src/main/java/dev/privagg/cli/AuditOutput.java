package dev.privagg.cli;

import dev.privagg.audit.AuditReport;
import dev.privagg.audit.AuditReport.Estimate;
import dev.privagg.audit.CanaryScorer.Statistic;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** An {@link AuditReport} for people (a table and a verdict) and for machines (JSON fields). */
final class AuditOutput {
  private AuditOutput() {}

  /** The report as a table, one row per statistic, the headline marked, then the verdict. */
  static void print(PrintWriter out, AuditReport report) {
    out.printf(
        "canary audit: %d inserted and %d unseen canaries, %d parameters, %d model deltas%n",
        report.canaries(), report.canaries(), report.dims(), report.deltas());
    out.printf(
        "  %-7s %-22s %-22s %-24s %-20s %10s %10s%n",
        "score",
        "inserted mean (sd)",
        "unseen mean (sd)",
        "epsilon-hat [95% CI]",
        "equal-spread [low]",
        "one-run",
        "f-DP");
    for (Estimate e : report.estimates()) {
      String name = e.statistic().label() + (e.statistic() == report.headline() ? " *" : "");
      out.printf(
          Locale.ROOT,
          "  %-7s %-22s %-22s %-24s %-20s %10s %10s%n",
          name,
          meanSd(e.insertedMean(), e.insertedStd()),
          meanSd(e.unseenMean(), e.unseenStd()),
          String.format(
              Locale.ROOT,
              "%.3g [%.3g, %.3g]",
              e.epsilonHat(),
              e.epsilonHatLow(),
              e.epsilonHatHigh()),
          String.format(
              Locale.ROOT, "%.3g [%.3g]", e.equalSpreadEpsilon(), e.equalSpreadEpsilonLow()),
          String.format(Locale.ROOT, "%.3g", e.oneRunEpsilon()),
          String.format(Locale.ROOT, "%.3g", e.oneRunFdpEpsilon()));
    }
    Estimate fin = report.estimate(Statistic.FINAL);
    out.printf(
        Locale.ROOT,
        "  final score against the exact null (a uniform direction's cosine in %d dimensions):"
            + " epsilon-hat %.3g%n",
        report.dims(),
        fin.closedFormEpsilonHat());
    out.printf(
        "claimed epsilon %s at delta %s; the verdict tests the f-DP bound and the equal-spread low"
            + " end, each at significance %s (%s for both); %d canaries can refute at most"
            + " epsilon %s%n",
        Text.number(report.analyticEpsilon()),
        Text.number(report.delta()),
        Text.number(report.significance() / 2),
        Text.number(report.significance()),
        report.canaries(),
        Text.number(report.refutableEpsilon()));
    out.println("verdict on the " + report.headline().label() + " score (*): " + explain(report));
    out.flush();
  }

  /** The verdict in a sentence a reader can act on. */
  static String explain(AuditReport report) {
    Estimate e = report.headlineEstimate();
    String claim = Text.number(report.analyticEpsilon());
    String level = Text.number(1 - report.significance() / 2);
    return switch (report.verdict()) {
      case CONSISTENT ->
          "consistent: neither the f-DP lower bound ("
              + Text.number(e.oneRunFdpEpsilon())
              + ") nor the equal-spread estimate's low end ("
              + Text.number(e.equalSpreadEpsilonLow())
              + ") exceeds the claimed "
              + claim
              + ", which these canaries could have refuted (up to "
              + Text.number(report.refutableEpsilon())
              + ")";
      case INCONCLUSIVE -> "INCONCLUSIVE: " + inconclusive(report, e);
      case ESTIMATE_ABOVE_CLAIM ->
          "estimate above the claim: the equal-spread estimate's low end ("
              + Text.number(e.equalSpreadEpsilonLow())
              + ") exceeds the claimed "
              + claim
              + " with confidence "
              + level
              + " if the scores are two normals of one spread, as a correct Gaussian mechanism"
              + " makes them; no lower bound exceeds it; check the accounting, and audit with more"
              + " canaries for a bound that needs no such assumption";
      case CLAIM_FALSIFIED ->
          "CLAIM FALSIFIED: the f-DP lower bound ("
              + Text.number(e.oneRunFdpEpsilon())
              + ") exceeds the claimed "
              + claim
              + " with probability at least "
              + level
              + "; the job releases more than its ledger says";
    };
  }

  /** Why nothing could be refuted, and how many canaries could. */
  private static String inconclusive(AuditReport report, Estimate e) {
    int needed =
        AuditReport.canariesToRefute(
            report.analyticEpsilon(), report.significance(), report.delta());
    return report.canaries()
        + " canaries can refute at most epsilon "
        + Text.number(report.refutableEpsilon())
        + " at delta "
        + Text.number(report.delta())
        + " (the f-DP bound if every inserted canary scored above every unseen one), not the"
        + " claimed "
        + Text.number(report.analyticEpsilon())
        + "; the equal-spread estimate's low end ("
        + Text.number(e.equalSpreadEpsilonLow())
        + ") does not exceed it either. "
        + (needed > 0
            ? "A refutable audit of this claim needs at least " + needed + " canaries"
            : "Not even " + AuditReport.MAX_CANARIES + " canaries could refute it")
        + " (privagg canaries --count)";
  }

  /** The report as JSON fields; {@code withScores} adds every canary's score. */
  static Map<String, Object> fields(AuditReport report, boolean withScores) {
    List<Map<String, Object>> rows =
        report.estimates().stream()
            .map(
                e -> {
                  Map<String, Object> row =
                      Output.fields(
                          "statistic", e.statistic().label(),
                          "insertedMean", Output.number(e.insertedMean()),
                          "insertedStd", Output.number(e.insertedStd()),
                          "unseenMean", Output.number(e.unseenMean()),
                          "unseenStd", Output.number(e.unseenStd()),
                          "epsilonHat", Output.number(e.epsilonHat()),
                          "epsilonHatCi95Low", Output.number(e.epsilonHatLow()),
                          "epsilonHatCi95High", Output.number(e.epsilonHatHigh()),
                          "equalSpreadEpsilon", Output.number(e.equalSpreadEpsilon()),
                          "equalSpreadEpsilonLow", Output.number(e.equalSpreadEpsilonLow()),
                          "closedFormEpsilonHat", Output.number(e.closedFormEpsilonHat()),
                          "oneRunEpsilon", Output.number(e.oneRunEpsilon()),
                          "oneRunFdpEpsilon", Output.number(e.oneRunFdpEpsilon()),
                          "oneRunThreshold", Output.number(e.oneRunThreshold()));
                  if (withScores) {
                    row.put("insertedScores", e.scores().inserted());
                    row.put("unseenScores", e.scores().unseen());
                  }
                  return row;
                })
            .toList();
    return Output.fields(
        "canaries", report.canaries(),
        "dims", report.dims(),
        "deltas", report.deltas(),
        "delta", report.delta(),
        "significance", report.significance(),
        "analyticEpsilon", Output.number(report.analyticEpsilon()),
        "refutableEpsilon", Output.number(report.refutableEpsilon()),
        "headline", report.headline().label(),
        "epsilonHat", Output.number(report.headlineEstimate().epsilonHat()),
        "verdict", report.verdict().name(),
        "statistics", rows);
  }

  private static String meanSd(double mean, double sd) {
    return String.format(Locale.ROOT, "%.4g (%.3g)", mean, sd);
  }
}
