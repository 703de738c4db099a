package dev.privagg.bench;

import dev.privagg.sim.Reports;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import org.knowm.xchart.XYChart;

/** The benchmark's outputs: a Markdown table, a CSV and a PNG of MB/s and latency against d. */
public final class BenchReport {
  private static final List<String> CSV_HEADER =
      List.of(
          "dimension",
          "clients",
          "record_bytes",
          "measured_rounds",
          "updates_per_s",
          "pipeline_mb_per_s",
          "ceiling_mb_per_s",
          "ratio_to_ceiling",
          "latency_rounds",
          "latency_p50_ms",
          "latency_p99_ms",
          "heap_peak_mb",
          "heap_live_peak_mb",
          "rss_peak_mb",
          "decode_share",
          "clip_share",
          "noise_share",
          "encode_share",
          "skipped");

  private BenchReport() {}

  /** Writes {@code bench.md}, {@code bench.csv} and {@code bench.png} into {@code dir}. */
  public static void write(Path dir, List<BenchResult> results) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("bench.md"), markdown(results));
    List<List<Object>> rows = new ArrayList<>();
    for (BenchResult r : results) {
      List<Object> row = new ArrayList<>();
      row.add(r.setting().dimension());
      row.add(r.setting().clients());
      row.add(r.recordBytes());
      row.add(r.measuredRounds());
      row.add(fixed(r.updatesPerSecond(), 1));
      row.add(fixed(r.megabytesPerSecond(), 1));
      row.add(fixed(r.ceilingMegabytesPerSecond(), 1));
      row.add(fixed(r.efficiency(), 3));
      row.add(r.latencyRounds());
      row.add(fixed(r.latencyP50Millis(), 0));
      row.add(fixed(r.latencyP99Millis(), 0));
      row.add(r.heapPeakMb());
      row.add(r.heapLivePeakMb());
      row.add(r.rssPeakMb());
      for (String stage : BenchResult.STAGES) {
        row.add(fixed(r.stageShares().getOrDefault(stage, Double.NaN), 3));
      }
      row.add(r.skipped() ? '"' + r.skipReason().replace("\"", "'") + '"' : "");
      rows.add(row);
    }
    Reports.csv(dir.resolve("bench.csv"), CSV_HEADER, rows);
    plot(dir.resolve("bench.png"), results);
  }

  /** The results as a Markdown table, skipped settings listed below it with their reason. */
  public static String markdown(List<BenchResult> results) {
    StringBuilder md = new StringBuilder();
    md.append(
        "| d | m | pipeline updates/s | pipeline MB/s | ceiling MB/s | ratio | round close p50 / p99"
            + " (rounds) | heap peak / live MB | RSS MB | decode | clip | noise | encode |\n");
    md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    List<String> skipped = new ArrayList<>();
    for (BenchResult r : results) {
      if (r.skipped()) {
        skipped.add(
            "- d = "
                + r.setting().dimensionLabel()
                + ", m = "
                + r.setting().clients()
                + ": "
                + r.skipReason());
        continue;
      }
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %.0f | %.0f | %.0f | %.2f | %.0f / %.0f ms (%d) | %d / %d | %d |",
              r.setting().dimensionLabel(),
              r.setting().clients(),
              r.updatesPerSecond(),
              r.megabytesPerSecond(),
              r.ceilingMegabytesPerSecond(),
              r.efficiency(),
              r.latencyP50Millis(),
              r.latencyP99Millis(),
              r.latencyRounds(),
              r.heapPeakMb(),
              r.heapLivePeakMb(),
              r.rssPeakMb()));
      for (String stage : BenchResult.STAGES) {
        md.append(String.format(Locale.ROOT, " %.2f%% |", 100 * r.stageShares().get(stage)));
      }
      md.append('\n');
    }
    if (!skipped.isEmpty()) {
      md.append("\nNot run:\n").append(String.join("\n", skipped)).append('\n');
    }
    return md.toString();
  }

  private static void plot(Path png, List<BenchResult> results) throws IOException {
    List<Reports.Series> throughput = new ArrayList<>();
    List<Reports.Series> latency = new ArrayList<>();
    TreeSet<Integer> clients = new TreeSet<>();
    results.stream().filter(r -> !r.skipped()).forEach(r -> clients.add(r.setting().clients()));
    for (int m : clients) {
      List<BenchResult> line =
          results.stream()
              .filter(r -> !r.skipped() && r.setting().clients() == m)
              .sorted((a, b) -> Integer.compare(a.setting().dimension(), b.setting().dimension()))
              .toList();
      double[] d = line.stream().mapToDouble(r -> r.setting().dimension()).toArray();
      throughput.add(
          new Reports.Series(
              "pipeline, m=" + m,
              d,
              line.stream().mapToDouble(BenchResult::megabytesPerSecond).toArray(),
              null));
      throughput.add(
          new Reports.Series(
              "ceiling, m=" + m,
              d,
              line.stream().mapToDouble(BenchResult::ceilingMegabytesPerSecond).toArray(),
              null));
      latency.add(
          new Reports.Series(
              "p50, m=" + m,
              d,
              line.stream().mapToDouble(BenchResult::latencyP50Millis).toArray(),
              null));
    }
    if (throughput.isEmpty()) {
      return;
    }
    XYChart mbs =
        Reports.chart(
            "Throughput: pipeline vs plain consumer", "d (float32 parameters)", "MB/s", throughput);
    XYChart ms =
        Reports.chart(
            "Round close latency (last update acked -> model visible)",
            "d (float32 parameters)",
            "ms",
            latency);
    for (XYChart chart : List.of(mbs, ms)) {
      chart.getStyler().setXAxisLogarithmic(true);
      chart.getStyler().setYAxisMin(0.0);
      chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
    }
    Reports.savePng(png, List.of(mbs, ms));
  }

  private static String fixed(double value, int digits) {
    return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%." + digits + "f", value);
  }
}
