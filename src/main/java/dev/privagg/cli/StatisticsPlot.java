package dev.privagg.cli;

import dev.privagg.avro.FeatureStatistics;
import dev.privagg.avro.QuantileStatistic;
import dev.privagg.avro.StatisticEstimate;
import dev.privagg.avro.StatisticsRelease;
import dev.privagg.sim.Reports;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.internal.chartpart.Chart;

/**
 * One statistics release as a picture: per feature its noisy histogram with 95% error bars, and its
 * quantiles with their intervals.
 */
final class StatisticsPlot {
  private StatisticsPlot() {}

  /** Writes the charts side by side to {@code png}; false when the release has nothing to draw. */
  static boolean write(Path png, long round, StatisticsRelease s) throws IOException {
    List<Chart<?, ?>> charts = new ArrayList<>();
    for (FeatureStatistics f : s.getFeatures()) {
      if (!f.getHistogram().isEmpty()) {
        charts.add(histogram(round, f));
      }
      if (!f.getQuantiles().isEmpty()) {
        charts.add(quantiles(round, f));
      }
    }
    if (charts.isEmpty()) {
      return false;
    }
    Reports.savePng(png, charts);
    return true;
  }

  private static CategoryChart chart(String title, String x, String y) {
    CategoryChart chart =
        new CategoryChartBuilder()
            .width(700)
            .height(450)
            .title(title)
            .xAxisTitle(x)
            .yAxisTitle(y)
            .build();
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    chart.getStyler().setPlotBackgroundColor(Color.WHITE);
    chart.getStyler().setLegendVisible(false);
    chart.getStyler().setErrorBarsColorSeriesColor(true);
    return chart;
  }

  private static CategoryChart histogram(long round, FeatureStatistics f) {
    CategoryChart chart =
        chart(f.getName() + ": rows per bin, round " + round, "bin from", "rows (noisy, 95%)");
    List<String> bins = new ArrayList<>();
    for (int j = 0; j < f.getHistogram().size(); j++) {
      bins.add(Text.number(f.getBinEdges().get(j)));
    }
    List<StatisticEstimate> h = f.getHistogram();
    chart.addSeries(
        "rows",
        bins,
        h.stream().map(StatisticEstimate::getValue).toList(),
        h.stream().map(e -> e.getUpper() - e.getValue()).toList());
    return chart;
  }

  private static CategoryChart quantiles(long round, FeatureStatistics f) {
    CategoryChart chart =
        chart(f.getName() + ": quantiles, round " + round, "level", f.getName() + " (95%)");
    chart.getStyler().setDefaultSeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Scatter);
    chart.getStyler().setMarkerSize(10);
    List<QuantileStatistic> q = f.getQuantiles();
    // xchart draws symmetric bars: the larger side of each bootstrap interval, so none is hidden.
    chart.addSeries(
        "quantiles",
        q.stream().map(x -> Text.number(x.getLevel())).toList(),
        q.stream().map(QuantileStatistic::getValue).toList(),
        q.stream()
            .map(x -> Math.max(x.getUpper() - x.getValue(), x.getValue() - x.getLower()))
            .toList());
    return chart;
  }
}
