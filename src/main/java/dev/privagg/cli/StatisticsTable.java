package dev.privagg.cli;

import dev.privagg.avro.FeatureStatistics;
import dev.privagg.avro.QuantileStatistic;
import dev.privagg.avro.StatisticEstimate;
import dev.privagg.avro.StatisticsBlock;
import dev.privagg.avro.StatisticsRelease;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A statistics job's release as a table for people and as JSON fields for machines. */
final class StatisticsTable {
  private StatisticsTable() {}

  /** One line per statistic, histogram bin and quantile, with its std and 95% interval. */
  static void print(PrintWriter out, StatisticsRelease s) {
    String row = "  %-20s %-18s %14s %12s   %s%n";
    out.printf(row, "feature", "statistic", "value", "noise std", "95% interval");
    out.printf(row, "", "rows", number(s.getCount()), std(s.getCount()), interval(s.getCount()));
    for (FeatureStatistics f : s.getFeatures()) {
      estimate(out, row, f.getName(), "sum", f.getSum());
      estimate(out, row, f.getName(), "mean", f.getMean());
      estimate(out, row, f.getName(), "variance", f.getVariance());
      estimate(out, row, f.getName(), "stddev", f.getStddev());
      List<Double> edges = f.getBinEdges();
      for (int j = 0; j < f.getHistogram().size(); j++) {
        String bin =
            "["
                + Text.number(edges.get(j))
                + ", "
                + Text.number(edges.get(j + 1))
                + (j == f.getHistogram().size() - 1 ? "]" : ")");
        estimate(out, row, f.getName(), bin, f.getHistogram().get(j));
      }
      for (QuantileStatistic q : f.getQuantiles()) {
        out.printf(
            row,
            f.getName(),
            "quantile " + Text.number(q.getLevel()),
            Text.number(q.getValue()),
            "",
            "[" + Text.number(q.getLower()) + ", " + Text.number(q.getUpper()) + "]");
      }
    }
    out.print("  budget:");
    for (StatisticsBlock b : s.getBlocks()) {
      out.printf(
          " %s %s (epsilon alone %s)",
          b.getName(), Text.number(b.getShare()), Text.number(b.getEpsilon()));
    }
    out.println();
  }

  private static void estimate(
      PrintWriter out, String row, String feature, String name, StatisticEstimate e) {
    if (e != null) {
      out.printf(row, feature, name, number(e), std(e), interval(e));
    }
  }

  private static String number(StatisticEstimate e) {
    return Text.number(e.getValue());
  }

  private static String std(StatisticEstimate e) {
    return Text.number(e.getStd());
  }

  private static String interval(StatisticEstimate e) {
    return "[" + Text.number(e.getLower()) + ", " + Text.number(e.getUpper()) + "]";
  }

  /** The release as nested JSON fields; NaN as null, infinities as strings. */
  static Map<String, Object> json(StatisticsRelease s) {
    List<Map<String, Object>> features = new ArrayList<>();
    for (FeatureStatistics f : s.getFeatures()) {
      features.add(
          Output.fields(
              "name", f.getName(),
              "lo", Output.number(f.getLo()),
              "hi", Output.number(f.getHi()),
              "sum", json(f.getSum()),
              "mean", json(f.getMean()),
              "variance", json(f.getVariance()),
              "stddev", json(f.getStddev()),
              "binEdges", f.getBinEdges(),
              "histogram", f.getHistogram().stream().map(StatisticsTable::json).toList(),
              "quantiles",
                  f.getQuantiles().stream()
                      .map(
                          q ->
                              Output.fields(
                                  "level", q.getLevel(),
                                  "value", Output.number(q.getValue()),
                                  "lower", Output.number(q.getLower()),
                                  "upper", Output.number(q.getUpper())))
                      .toList()));
    }
    List<Map<String, Object>> blocks = new ArrayList<>();
    for (StatisticsBlock b : s.getBlocks()) {
      blocks.add(
          Output.fields(
              "name", b.getName(),
              "sensitivity", Output.number(b.getSensitivity()),
              "share", b.getShare(),
              "noiseStd", Output.number(b.getNoiseStd()),
              "noiseMultiplier", Output.number(b.getNoiseMultiplier()),
              "epsilon", Output.number(b.getEpsilon())));
    }
    return Output.fields(
        "expectedClients", s.getExpectedClients(),
        "maxRows", s.getMaxRows(),
        "count", json(s.getCount()),
        "features", features,
        "blocks", blocks);
  }

  private static Map<String, Object> json(StatisticEstimate e) {
    return e == null
        ? null
        : Output.fields(
            "value", Output.number(e.getValue()),
            "std", Output.number(e.getStd()),
            "lower", Output.number(e.getLower()),
            "upper", Output.number(e.getUpper()));
  }
}
