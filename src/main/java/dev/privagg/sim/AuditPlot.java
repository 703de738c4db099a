package dev.privagg.sim;

import dev.privagg.audit.AuditReport;
import dev.privagg.audit.AuditReport.Estimate;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The audit as a picture, one panel per statistic: histograms (as densities) of the inserted and
 * the unseen canaries' scores, the Gaussians epsilon-hat is computed from, and the f-DP one-run
 * bound's threshold, above which a score is guessed "inserted".
 */
public final class AuditPlot {
  private static final int BINS = 30;

  private AuditPlot() {}

  /** Saves the panels of {@code report} side by side in {@code png}. */
  public static void save(Path png, AuditReport report) throws IOException {
    List<XYChart> charts = new ArrayList<>();
    for (Estimate e : report.estimates()) {
      charts.add(panel(report, e));
    }
    Reports.savePng(png, charts);
  }

  private static XYChart panel(AuditReport report, Estimate e) {
    double[] in = e.scores().inserted();
    double[] out = e.scores().unseen();
    double lo = Math.min(min(in), min(out));
    double hi = Math.max(max(in), max(out));
    if (hi <= lo) {
      hi = lo + 1e-9;
    }
    XYChart chart =
        new XYChartBuilder()
            .width(600)
            .height(450)
            .title(
                String.format(
                    Locale.ROOT,
                    "%s: epsilon-hat %.3g, f-DP bound %.3g, claimed %.3g",
                    e.statistic().label(),
                    e.epsilonHat(),
                    e.oneRunFdpEpsilon(),
                    report.analyticEpsilon()))
            .xAxisTitle("score")
            .yAxisTitle("density")
            .build();
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    chart.getStyler().setPlotBackgroundColor(Color.WHITE);
    chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
    histogram(chart, "unseen (" + out.length + ")", out, lo, hi, new Color(90, 120, 200));
    histogram(chart, "inserted (" + in.length + ")", in, lo, hi, new Color(220, 90, 60));
    gaussian(chart, "unseen fit", e.unseenMean(), e.unseenStd(), lo, hi, new Color(90, 120, 200));
    gaussian(
        chart, "inserted fit", e.insertedMean(), e.insertedStd(), lo, hi, new Color(220, 90, 60));
    if (Double.isFinite(e.oneRunThreshold())) {
      double top = peak(chart);
      XYSeries t =
          chart.addSeries(
              "f-DP bound threshold",
              new double[] {e.oneRunThreshold(), e.oneRunThreshold()},
              new double[] {0, top});
      t.setMarker(SeriesMarkers.NONE);
      t.setLineColor(Color.DARK_GRAY);
      t.setLineStyle(
          new BasicStroke(
              1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1, new float[] {6, 4}, 0));
    }
    return chart;
  }

  /** A density histogram drawn as a step line over {@value #BINS} bins of [lo, hi]. */
  private static void histogram(
      XYChart chart, String name, double[] values, double lo, double hi, Color color) {
    double width = (hi - lo) / BINS;
    double[] counts = new double[BINS];
    for (double v : values) {
      counts[Math.min(BINS - 1, (int) ((v - lo) / width))]++;
    }
    double[] x = new double[2 * BINS];
    double[] y = new double[2 * BINS];
    for (int b = 0; b < BINS; b++) {
      double density = counts[b] / (values.length * width);
      x[2 * b] = lo + b * width;
      x[2 * b + 1] = lo + (b + 1) * width;
      y[2 * b] = density;
      y[2 * b + 1] = density;
    }
    XYSeries s = chart.addSeries(name, x, y);
    s.setMarker(SeriesMarkers.NONE);
    s.setLineColor(color);
    s.setLineStyle(new BasicStroke(2f));
  }

  private static void gaussian(
      XYChart chart, String name, double mean, double std, double lo, double hi, Color color) {
    if (!(std > 0)) {
      return;
    }
    int n = 200;
    double[] x = new double[n];
    double[] y = new double[n];
    for (int i = 0; i < n; i++) {
      x[i] = lo + (hi - lo) * i / (n - 1);
      double z = (x[i] - mean) / std;
      y[i] = Math.exp(-z * z / 2) / (std * Math.sqrt(2 * Math.PI));
    }
    XYSeries s = chart.addSeries(name, x, y);
    s.setMarker(SeriesMarkers.NONE);
    s.setLineColor(color.darker());
    s.setLineStyle(
        new BasicStroke(
            1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1, new float[] {2, 3}, 0));
  }

  private static double peak(XYChart chart) {
    double top = 0;
    for (XYSeries s : chart.getSeriesMap().values()) {
      for (double v : s.getYData()) {
        top = Math.max(top, v);
      }
    }
    return top;
  }

  private static double min(double[] v) {
    double m = Double.POSITIVE_INFINITY;
    for (double x : v) {
      m = Math.min(m, x);
    }
    return m;
  }

  private static double max(double[] v) {
    double m = Double.NEGATIVE_INFINITY;
    for (double x : v) {
      m = Math.max(m, x);
    }
    return m;
  }
}
