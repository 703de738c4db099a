package dev.privagg.cli;

import dev.privagg.sim.Reports;
import dev.privagg.sim.StatisticsEvaluation;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.knowm.xchart.XYChart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg evaluate-statistics}: error of DP statistics on real data, by clients. */
@Command(
    name = "evaluate-statistics",
    mixinStandardHelpOptions = true,
    showDefaultValues = true,
    description = {
      "Relative error of a statistics job's release on real data: the dataset's rows split over"
          + " N clients (client-level DP, one release at each epsilon), beside central DP on the"
          + " pooled rows (row-level) at the same epsilon, and what NVIDIA FLARE's statistics"
          + " filters (min_count 10, max_bins_percent 10, as in its examples) release for the"
          + " same split: exact values, every client's count but only larger clients' sums and"
          + " histograms, no noise, no epsilon.",
      "Features: breast-cancer: mean radius [0, 30], texture [0, 40], area [0, 2600];"
          + " fashion-mnist: an image's mean pixel intensity and its centre pixel, in [0, 1]."
          + " Each: mean, stddev, a 10-bin histogram and quartiles, the budget split equally."
    })
final class EvaluateStatisticsCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--dataset",
      required = true,
      description = "breast-cancer (569 patients) or fashion-mnist (60,000 images).")
  String dataset;

  @Option(
      names = "--clients",
      split = ",",
      description =
          "Client counts (default: 569,57,19 for breast-cancer; 60000,6000,600 otherwise).")
  int[] clients;

  @Option(names = "--epsilon", split = ",", defaultValue = "1,4", description = "Epsilons.")
  double[] epsilons;

  @Option(names = "--delta", defaultValue = "1e-5", description = "Delta of each release.")
  double delta;

  @Option(names = "--seeds", defaultValue = "20", description = "Noise draws per setting.")
  int seeds;

  @Option(
      names = "--out",
      description = "Write DIR/statistics-errors.csv and DIR/statistics-errors.png.")
  Path out;

  @Mixin JsonOption json;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    flags.delta("--delta", delta);
    flags.atLeastOne("--seeds", seeds);
    for (double e : epsilons) {
      flags.positive("--epsilon", e);
    }
    int[] counts =
        clients != null
            ? clients
            : dataset.equals("breast-cancer")
                ? new int[] {569, 57, 19}
                : new int[] {60000, 6000, 600};
    PrintWriter err = spec.commandLine().getErr();
    List<StatisticsEvaluation.Row> rows;
    try {
      rows =
          StatisticsEvaluation.run(
              dataset,
              counts,
              epsilons,
              delta,
              seeds,
              line -> {
                err.println(line);
                err.flush();
              });
    } catch (IllegalArgumentException e) {
      throw flags.fail(e.getMessage());
    }
    PrintWriter stdout = spec.commandLine().getOut();
    if (json.enabled) {
      for (StatisticsEvaluation.Row r : rows) {
        Output.line(stdout, fields(r));
      }
    } else {
      String format = "%-8s %-6s %-8s %-10s %-20s %12s %22s %14s %14s %14s%n";
      stdout.printf(
          format,
          "clients",
          "rows",
          "epsilon",
          "feature",
          "statistic",
          "truth",
          "federated error",
          "central error",
          "FLARE error",
          "stated std");
      for (StatisticsEvaluation.Row r : rows) {
        stdout.printf(
            format,
            r.clients(),
            r.rowsPerClient(),
            Text.number(r.epsilon()),
            r.feature(),
            r.statistic(),
            Text.number(r.truth()),
            percent(r.federatedError()) + " +- " + percent(r.federatedErrorStd()),
            percent(r.centralError()),
            r.flareSuppressed() ? "suppressed" : percent(r.flareError()),
            Double.isNaN(r.statedStd()) ? "-" : percent(r.statedStd()));
      }
      stdout.println(
          "errors: |estimate - truth| / |truth| (histograms: L1 distance / rows), mean +- std over"
              + " seeds; central: row-level DP on the pooled rows; FLARE: its filters' exact"
              + " release (no epsilon: one client's sums are exposed);"
              + " stated std: the release's own noise std, relative");
    }
    stdout.flush();
    if (out != null) {
      write(rows);
      err.println("outputs: " + out);
    }
    return 0;
  }

  private static String percent(double x) {
    return String.format("%.3g%%", 100 * x);
  }

  private static Map<String, Object> fields(StatisticsEvaluation.Row r) {
    return Output.fields(
        "dataset", r.dataset(),
        "clients", r.clients(),
        "rowsPerClient", r.rowsPerClient(),
        "epsilon", r.epsilon(),
        "noiseMultiplier", r.noiseMultiplier(),
        "feature", r.feature(),
        "statistic", r.statistic(),
        "truth", Output.number(r.truth()),
        "federatedError", Output.number(r.federatedError()),
        "federatedErrorStd", Output.number(r.federatedErrorStd()),
        "centralError", Output.number(r.centralError()),
        "flareError", Output.number(r.flareError()),
        "statedStd", Output.number(r.statedStd()));
  }

  /** The CSV of every row, and per epsilon the mean's and histogram's error by clients. */
  private void write(List<StatisticsEvaluation.Row> rows) throws java.io.IOException {
    List<List<Object>> table = new ArrayList<>();
    for (StatisticsEvaluation.Row r : rows) {
      table.add(new ArrayList<>(fields(r).values()));
    }
    Reports.csv(
        out.resolve("statistics-errors.csv"), new ArrayList<>(fields(rows.get(0)).keySet()), table);
    List<XYChart> charts = new ArrayList<>();
    for (double epsilon : epsilons) {
      List<Reports.Series> series = new ArrayList<>();
      for (String statistic : List.of("mean", "histogram (L1 / n)")) {
        for (String kind : List.of("federated", "central")) {
          List<StatisticsEvaluation.Row> chosen =
              rows.stream()
                  .filter(r -> r.epsilon() == epsilon && r.statistic().equals(statistic))
                  .filter(r -> r.feature().equals(rows.get(1).feature()))
                  .toList();
          double[] x = chosen.stream().mapToDouble(StatisticsEvaluation.Row::clients).toArray();
          double[] y =
              chosen.stream()
                  .mapToDouble(
                      r -> 100 * (kind.equals("federated") ? r.federatedError() : r.centralError()))
                  .toArray();
          series.add(
              new Reports.Series(
                  rows.get(1).feature() + " " + statistic + ", " + kind, x, y, null));
        }
      }
      XYChart chart =
          Reports.chart(
              dataset + ", epsilon " + Text.number(epsilon),
              "clients (rows split evenly)",
              "relative error, %",
              series);
      chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.OutsideS);
      chart.getStyler().setXAxisLogarithmic(true);
      chart.getStyler().setYAxisLogarithmic(true);
      charts.add(chart);
    }
    Reports.savePng(out.resolve("statistics-errors.png"), charts);
  }
}
