package dev.privagg.bench;

import dev.privagg.sim.Reports;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;

/**
 * The benchmark's outputs: a Markdown table, a CSV and a PNG of MB/s (each pipeline line with its
 * ceiling), latency, scaling with parallelism and latency against checkpoint load.
 */
public final class BenchReport {
  private static final List<String> CSV_HEADER =
      List.of(
          "dimension",
          "clients",
          "parallelism",
          "checkpoint_interval_ms",
          "state_backend",
          "mechanism",
          "record_bytes",
          "measured_rounds",
          "updates_per_s",
          "pipeline_mb_per_s",
          "ceiling_mb_per_s",
          "ratio_to_ceiling",
          "scaling",
          "latency_rounds",
          "latency_p50_ms",
          "latency_p99_ms",
          "checkpoints",
          "checkpoint_mb_per_s",
          "checkpoint_mb_per_round",
          "checkpoint_state_mb",
          "heap_peak_mb",
          "heap_live_peak_mb",
          "rss_peak_mb",
          "decode_share",
          "clip_share",
          "noise_share",
          "correlated_noise_share",
          "encode_share",
          "latency_p50_vs_independent",
          "latency_p99_vs_independent",
          "checkpoint_mb_per_round_vs_independent",
          "updates_per_s_vs_independent",
          "skipped");

  /** Line colours; a pipeline line and its ceiling share one. */
  private static final List<Color> PALETTE =
      List.of(
          new Color(0x1f77b4),
          new Color(0xff7f0e),
          new Color(0x2ca02c),
          new Color(0xd62728),
          new Color(0x9467bd),
          new Color(0x8c564b),
          new Color(0xe377c2),
          new Color(0x7f7f7f),
          new Color(0xbcbd22),
          new Color(0x17becf));

  private static final BasicStroke SOLID = new BasicStroke(2f);
  private static final BasicStroke DASHED =
      new BasicStroke(
          2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {7f, 5f}, 0f);

  private BenchReport() {}

  /** Writes {@code bench.md}, {@code bench.csv} and {@code bench.png} into {@code dir}. */
  public static void write(Path dir, List<BenchResult> results) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("bench.md"), markdown(results));
    List<List<Object>> rows = new ArrayList<>();
    for (BenchResult r : results) {
      BenchSetting s = r.setting();
      List<Object> row = new ArrayList<>();
      row.add(s.dimension());
      row.add(s.clients());
      row.add(s.parallelism());
      row.add(s.checkpointMillis());
      row.add(s.stateBackend().configName());
      row.add(s.mechanism().configName());
      row.add(r.recordBytes());
      row.add(r.measuredRounds());
      row.add(fixed(r.updatesPerSecond(), 1));
      row.add(fixed(r.megabytesPerSecond(), 1));
      row.add(fixed(r.ceilingMegabytesPerSecond(), 1));
      row.add(fixed(r.efficiency(), 3));
      row.add(fixed(scaling(r, results, BenchResult::updatesPerSecond), 3));
      row.add(r.latencyRounds());
      row.add(fixed(r.latencyP50Millis(), 0));
      row.add(fixed(r.latencyP99Millis(), 0));
      row.add(r.checkpoints().completed());
      row.add(fixed(r.checkpoints().megabytesPerSecond(), 2));
      row.add(fixed(r.checkpoints().megabytesPerRound(), 2));
      row.add(fixed(r.checkpoints().stateMegabytes(), 2));
      row.add(r.heapPeakMb());
      row.add(r.heapLivePeakMb());
      row.add(r.rssPeakMb());
      for (String stage : BenchResult.STAGES) {
        row.add(fixed(r.stageShares().getOrDefault(stage, Double.NaN), 3));
      }
      for (ToDoubleFunction<BenchResult> figure : AGAINST_INDEPENDENT) {
        row.add(fixed(againstIndependent(r, results, figure), 3));
      }
      row.add(r.skipped() ? '"' + r.skipReason().replace("\"", "'") + '"' : "");
      rows.add(row);
    }
    Reports.csv(dir.resolve("bench.csv"), CSV_HEADER, rows);
    plot(dir.resolve("bench.png"), results);
  }

  /**
   * {@code figure} of {@code result} over the same figure of the same setting at parallelism 1 in
   * {@code results}; NaN when that setting was not run (or is the result itself at parallelism 1,
   * 1.0).
   */
  static double scaling(
      BenchResult result, List<BenchResult> results, ToDoubleFunction<BenchResult> figure) {
    if (result.skipped()) {
      return Double.NaN;
    }
    BenchSetting base = result.setting().atParallelismOne();
    return results.stream()
        .filter(r -> !r.skipped() && r.setting().equals(base))
        .findFirst()
        .map(r -> figure.applyAsDouble(result) / figure.applyAsDouble(r))
        .orElse(Double.NaN);
  }

  /** The figures a correlated-noise setting is given over its independent-noise twin. */
  private static final List<ToDoubleFunction<BenchResult>> AGAINST_INDEPENDENT =
      List.of(
          BenchResult::latencyP50Millis,
          BenchResult::latencyP99Millis,
          r -> r.checkpoints().megabytesPerRound(),
          BenchResult::updatesPerSecond);

  /**
   * {@code figure} of {@code result} over the same figure of the same setting with independent
   * noise in {@code results} (same d, m, p, checkpoint interval and state backend); NaN when that
   * setting was not run, or {@code result} has independent noise itself.
   */
  static double againstIndependent(
      BenchResult result, List<BenchResult> results, ToDoubleFunction<BenchResult> figure) {
    if (result.skipped() || result.setting().mechanism() == NoiseMechanismKind.INDEPENDENT) {
      return Double.NaN;
    }
    BenchSetting base = result.setting().withIndependentNoise();
    return results.stream()
        .filter(r -> !r.skipped() && r.setting().equals(base))
        .findFirst()
        .map(r -> figure.applyAsDouble(result) / figure.applyAsDouble(r))
        .orElse(Double.NaN);
  }

  /**
   * The results as a Markdown table, then each correlated-noise setting next to its
   * independent-noise twin, then the skipped settings with their reason.
   */
  public static String markdown(List<BenchResult> results) {
    StringBuilder md = new StringBuilder();
    md.append(
        "| d | m | p | checkpoint ms | state | mechanism | pipeline updates/s | pipeline MB/s |"
            + " ceiling MB/s | ratio | scaling | round close p50 / p99 (rounds) | checkpoint MB/s |"
            + " checkpoint MB / round | heap peak / live MB | RSS MB | decode | clip | noise |"
            + " blt noise | encode |\n");
    md.append("|" + " --- |".repeat(21) + "\n");
    List<String> skipped = new ArrayList<>();
    for (BenchResult r : results) {
      BenchSetting s = r.setting();
      if (r.skipped()) {
        skipped.add(
            String.format(
                Locale.ROOT,
                "- d = %s, m = %d, p = %d, checkpoints every %d ms, %s, %s noise: %s",
                s.dimensionLabel(),
                s.clients(),
                s.parallelism(),
                s.checkpointMillis(),
                s.stateBackend().configName(),
                s.mechanism().configName(),
                r.skipReason()));
        continue;
      }
      double scaling = scaling(r, results, BenchResult::updatesPerSecond);
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %d | %s | %s | %.0f | %.0f | %.0f | %.2f | %s | %.0f / %.0f ms"
                  + " (%d) | %.1f | %.1f | %d / %d | %d |",
              s.dimensionLabel(),
              s.clients(),
              s.parallelism(),
              s.checkpointMillis(),
              s.stateBackend().configName(),
              s.mechanism().configName(),
              r.updatesPerSecond(),
              r.megabytesPerSecond(),
              r.ceilingMegabytesPerSecond(),
              r.efficiency(),
              Double.isNaN(scaling) ? "-" : String.format(Locale.ROOT, "%.2f", scaling),
              r.latencyP50Millis(),
              r.latencyP99Millis(),
              r.latencyRounds(),
              r.checkpoints().megabytesPerSecond(),
              r.checkpoints().megabytesPerRound(),
              r.heapPeakMb(),
              r.heapLivePeakMb(),
              r.rssPeakMb()));
      for (String stage : BenchResult.STAGES) {
        md.append(String.format(Locale.ROOT, " %.2f%% |", 100 * r.stageShares().get(stage)));
      }
      md.append('\n');
    }
    md.append(againstIndependentMarkdown(results));
    if (!skipped.isEmpty()) {
      md.append("\nNot run:\n").append(String.join("\n", skipped)).append('\n');
    }
    return md.toString();
  }

  /**
   * Each correlated-noise setting beside its independent-noise twin, as blt / independent; empty
   * when no pair was run.
   */
  static String againstIndependentMarkdown(List<BenchResult> results) {
    StringBuilder md = new StringBuilder();
    for (BenchResult r : results) {
      if (Double.isNaN(againstIndependent(r, results, BenchResult::updatesPerSecond))) {
        continue;
      }
      BenchSetting s = r.setting();
      BenchSetting base = s.withIndependentNoise();
      BenchResult twin =
          results.stream()
              .filter(o -> !o.skipped() && o.setting().equals(base))
              .findFirst()
              .orElseThrow();
      if (md.isEmpty()) {
        md.append(
            "\nCorrelated noise against independent noise (same d, m, p, checkpoint interval and"
                + " state backend; ratio = blt / independent):\n\n"
                + "| d | m | p | checkpoint ms | state | round close p50 blt / independent |"
                + " ratio | round close p99 blt / independent | ratio | checkpoint MB / round blt"
                + " / independent | ratio | updates/s blt / independent | ratio |\n"
                + "|"
                + " --- |".repeat(13)
                + "\n");
      }
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %d | %s | %.0f / %.0f ms | %.2f | %.0f / %.0f ms | %.2f |"
                  + " %.1f / %.1f | %.2f | %.1f / %.1f | %.2f |\n",
              s.dimensionLabel(),
              s.clients(),
              s.parallelism(),
              s.checkpointMillis(),
              s.stateBackend().configName(),
              r.latencyP50Millis(),
              twin.latencyP50Millis(),
              r.latencyP50Millis() / twin.latencyP50Millis(),
              r.latencyP99Millis(),
              twin.latencyP99Millis(),
              r.latencyP99Millis() / twin.latencyP99Millis(),
              r.checkpoints().megabytesPerRound(),
              twin.checkpoints().megabytesPerRound(),
              r.checkpoints().megabytesPerRound() / twin.checkpoints().megabytesPerRound(),
              r.updatesPerSecond(),
              twin.updatesPerSecond(),
              r.updatesPerSecond() / twin.updatesPerSecond()));
    }
    return md.toString();
  }

  /** A line in a chart: its points, and whether it is a ceiling (dashed) or a measured figure. */
  private record Line(String name, double[] x, double[] y, Color color, boolean dashed) {}

  private static void plot(Path png, List<BenchResult> results) throws IOException {
    List<BenchResult> run = results.stream().filter(r -> !r.skipped()).toList();
    if (run.isEmpty()) {
      return;
    }
    // Only what varies in this run names a line: "m=100", or "m=100 p=2 rocksdb".
    boolean manyClients = distinct(run, r -> r.setting().clients()) > 1;
    boolean manyParallelisms = distinct(run, r -> r.setting().parallelism()) > 1;
    boolean manyIntervals = distinct(run, r -> r.setting().checkpointMillis()) > 1;
    boolean manyBackends = distinct(run, r -> r.setting().stateBackend()) > 1;
    boolean manyDimensions = distinct(run, r -> r.setting().dimension()) > 1;
    boolean manyMechanisms = distinct(run, r -> r.setting().mechanism()) > 1;
    Function<BenchSetting, String> label =
        s -> {
          List<String> parts = new ArrayList<>();
          if (manyDimensions) {
            parts.add("d=" + s.dimensionLabel());
          }
          if (manyClients || parts.isEmpty()) {
            parts.add("m=" + s.clients());
          }
          if (manyParallelisms) {
            parts.add("p=" + s.parallelism());
          }
          if (manyIntervals) {
            parts.add(s.checkpointMillis() + " ms");
          }
          if (manyBackends) {
            parts.add(s.stateBackend().configName());
          }
          if (manyMechanisms) {
            parts.add(s.mechanism().configName());
          }
          return String.join(" ", parts);
        };
    Function<BenchSetting, String> labelButD =
        s ->
            label
                .apply(s)
                .replaceFirst("^d=\\S+ ?", "")
                .transform(l -> l.isEmpty() ? "m=" + s.clients() : l);

    // Against d: one line per setting of everything else.
    Map<BenchSetting, List<BenchResult>> byRest =
        group(
            run,
            s ->
                new BenchSetting(
                    1,
                    s.clients(),
                    s.parallelism(),
                    s.checkpointMillis(),
                    s.stateBackend(),
                    s.mechanism()));
    List<Line> throughput = new ArrayList<>();
    List<Line> latency = new ArrayList<>();
    int colour = 0;
    for (var entry : byRest.entrySet()) {
      List<BenchResult> line = sorted(entry.getValue(), r -> r.setting().dimension());
      double[] d = values(line, r -> r.setting().dimension());
      Color c = PALETTE.get(colour++ % PALETTE.size());
      String name = labelButD.apply(entry.getKey());
      throughput.add(
          new Line("pipeline " + name, d, values(line, BenchResult::megabytesPerSecond), c, false));
      throughput.add(
          new Line(
              "ceiling " + name, d, values(line, BenchResult::ceilingMegabytesPerSecond), c, true));
      latency.add(
          new Line("p50 " + name, d, values(line, BenchResult::latencyP50Millis), c, false));
    }
    List<XYChart> charts = new ArrayList<>();
    charts.add(
        chart(
            "Throughput: pipeline (solid) vs plain consumers (dashed)",
            "d (float32 parameters)",
            "MB/s",
            throughput,
            true));
    charts.add(
        chart(
            "Round close latency (last update acked -> model visible)",
            "d (float32 parameters)",
            "ms",
            latency,
            true));

    if (manyParallelisms) {
      // Against p: updates/s and the ceiling, each over its own value at p = 1.
      List<Line> scaling = new ArrayList<>();
      colour = 0;
      for (var entry :
          group(
                  run,
                  s ->
                      new BenchSetting(
                          s.dimension(),
                          s.clients(),
                          1,
                          s.checkpointMillis(),
                          s.stateBackend(),
                          s.mechanism()))
              .entrySet()) {
        List<BenchResult> line =
            sorted(entry.getValue(), r -> r.setting().parallelism()).stream()
                .filter(r -> !Double.isNaN(scaling(r, run, BenchResult::updatesPerSecond)))
                .toList();
        if (line.isEmpty()) {
          continue;
        }
        double[] p = values(line, r -> r.setting().parallelism());
        Color c = PALETTE.get(colour++ % PALETTE.size());
        String name = label.apply(entry.getKey()).replaceFirst(" ?p=1", "");
        scaling.add(
            new Line(
                "pipeline " + name,
                p,
                values(line, r -> scaling(r, run, BenchResult::updatesPerSecond)),
                c,
                false));
        scaling.add(
            new Line(
                "ceiling " + name,
                p,
                values(line, r -> scaling(r, run, BenchResult::ceilingMegabytesPerSecond)),
                c,
                true));
      }
      if (!scaling.isEmpty()) {
        charts.add(
            chart(
                "Scaling: throughput at p / at p = 1 (ceiling dashed)",
                "parallelism p (and updates partitions)",
                "x p = 1",
                scaling,
                false));
      }
    }
    if (manyIntervals) {
      // Latency against what checkpoints cost, one line per setting over its intervals.
      List<Line> tradeOff = new ArrayList<>();
      colour = 0;
      for (var entry :
          group(
                  run,
                  s ->
                      new BenchSetting(
                          s.dimension(),
                          s.clients(),
                          s.parallelism(),
                          BenchSetting.DEFAULT_CHECKPOINT_MILLIS,
                          s.stateBackend(),
                          s.mechanism()))
              .entrySet()) {
        List<BenchResult> line =
            sorted(entry.getValue(), r -> r.checkpoints().megabytesPerSecond());
        Color c = PALETTE.get(colour++ % PALETTE.size());
        String name = label.apply(entry.getKey()).replaceFirst(" ?\\d+ ms", "");
        tradeOff.add(
            new Line(
                "p50 " + name,
                values(line, r -> r.checkpoints().megabytesPerSecond()),
                values(line, BenchResult::latencyP50Millis),
                c,
                false));
        tradeOff.add(
            new Line(
                "p99 " + name,
                values(line, r -> r.checkpoints().megabytesPerSecond()),
                values(line, BenchResult::latencyP99Millis),
                c,
                true));
      }
      charts.add(
          chart(
              "Round close latency vs checkpoint bytes (one point per interval)",
              "checkpoint MB/s during live rounds",
              "ms",
              tradeOff,
              false));
    }
    Files.createDirectories(png.toAbsolutePath().getParent());
    // The encoder fills its grid completely: four charts in two rows, fewer in one.
    int rows = charts.size() == 4 ? 2 : 1;
    BitmapEncoder.saveBitmap(
        charts, rows, charts.size() / rows, png.toString(), BitmapEncoder.BitmapFormat.PNG);
  }

  private static XYChart chart(
      String title, String xTitle, String yTitle, List<Line> lines, boolean logX) {
    List<Reports.Series> series = new ArrayList<>();
    for (Line line : lines) {
      series.add(new Reports.Series(line.name(), line.x(), line.y(), null));
    }
    XYChart chart = Reports.chart(title, xTitle, yTitle, series);
    for (Line line : lines) {
      XYSeries s = chart.getSeriesMap().get(line.name());
      s.setLineColor(line.color());
      s.setMarkerColor(line.color());
      s.setLineStyle(line.dashed() ? DASHED : SOLID);
    }
    chart.getStyler().setXAxisLogarithmic(logX);
    chart.getStyler().setYAxisMin(0.0);
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    return chart;
  }

  private static Map<BenchSetting, List<BenchResult>> group(
      List<BenchResult> results, Function<BenchSetting, BenchSetting> key) {
    Map<BenchSetting, List<BenchResult>> groups = new LinkedHashMap<>();
    for (BenchResult r : results) {
      groups.computeIfAbsent(key.apply(r.setting()), k -> new ArrayList<>()).add(r);
    }
    return groups;
  }

  private static List<BenchResult> sorted(
      List<BenchResult> results, ToDoubleFunction<BenchResult> by) {
    return results.stream().sorted(Comparator.comparingDouble(by)).toList();
  }

  private static double[] values(List<BenchResult> results, ToDoubleFunction<BenchResult> value) {
    return results.stream().mapToDouble(value).toArray();
  }

  private static long distinct(List<BenchResult> results, Function<BenchResult, Object> key) {
    return results.stream().map(key).distinct().count();
  }

  private static String fixed(double value, int digits) {
    return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%." + digits + "f", value);
  }
}
