package dev.privagg.sim;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVPrinter;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.CategorySeries.CategorySeriesRenderStyle;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** CSV, JSON and PNG outputs of simulations and evaluations. */
public final class Reports {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  static {
    System.setProperty("java.awt.headless", "true");
  }

  private Reports() {}

  /** A line to draw: name, x values, y values and optional error bars (null for none). */
  public record Series(String name, double[] x, double[] y, double[] errors) {}

  /** Writes a PNG line chart; series with error bars are drawn with them. */
  public static void lineChart(
      Path png,
      String title,
      String xTitle,
      String yTitle,
      List<Series> series,
      Double yMin,
      Double yMax)
      throws IOException {
    XYChart chart = chart(title, xTitle, yTitle, series);
    if (yMin != null) {
      chart.getStyler().setYAxisMin(yMin);
    }
    if (yMax != null) {
      chart.getStyler().setYAxisMax(yMax);
    }
    savePng(png, List.of(chart));
  }

  /** A line chart of {@code series}, for callers that style it further before saving. */
  public static XYChart chart(String title, String xTitle, String yTitle, List<Series> series) {
    XYChart chart =
        new XYChartBuilder()
            .width(800)
            .height(500)
            .title(title)
            .xAxisTitle(xTitle)
            .yAxisTitle(yTitle)
            .build();
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    chart.getStyler().setPlotBackgroundColor(Color.WHITE);
    chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideSE);
    for (Series s : series) {
      XYSeries added =
          s.errors() == null
              ? chart.addSeries(s.name(), s.x(), s.y())
              : chart.addSeries(s.name(), s.x(), s.y(), s.errors());
      added.setMarker(SeriesMarkers.CIRCLE);
      added.setLineStyle(new BasicStroke(2f));
    }
    return chart;
  }

  /** A mean with its 95% interval, drawn as one point with error bars. */
  public record Interval(String name, double mean, double low, double high) {}

  /**
   * Points with error bars, one per interval, named on the x axis. xchart draws symmetric bars, so
   * each is drawn as mean +- half the interval's width: exact for t-intervals, an approximation for
   * a Wilson interval (whose centre is not the mean).
   */
  public static CategoryChart intervalChart(String title, String yTitle, List<Interval> intervals) {
    CategoryChart chart =
        new CategoryChartBuilder().width(800).height(500).title(title).yAxisTitle(yTitle).build();
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    chart.getStyler().setPlotBackgroundColor(Color.WHITE);
    chart.getStyler().setLegendVisible(false);
    chart.getStyler().setDefaultSeriesRenderStyle(CategorySeriesRenderStyle.Scatter);
    chart.getStyler().setErrorBarsColorSeriesColor(true);
    chart.getStyler().setMarkerSize(10);
    double low = intervals.stream().mapToDouble(Interval::low).min().orElse(0);
    double high = intervals.stream().mapToDouble(Interval::high).max().orElse(1);
    double pad = Math.max(0.01, (high - low) * 0.15);
    chart.getStyler().setYAxisMin(Math.max(0, low - pad));
    chart.getStyler().setYAxisMax(Math.min(1, high + pad));
    CategorySeries series =
        chart.addSeries(
            yTitle,
            intervals.stream().map(Interval::name).toList(),
            intervals.stream().map(Interval::mean).toList(),
            intervals.stream().map(i -> (i.high() - i.low()) / 2).toList());
    series.setMarker(SeriesMarkers.CIRCLE);
    return chart;
  }

  /** Saves charts side by side in one PNG. */
  public static void savePng(Path png, List<? extends Chart<?, ?>> charts) throws IOException {
    Files.createDirectories(png.toAbsolutePath().getParent());
    BitmapEncoder.saveBitmap(
        charts, 1, charts.size(), png.toString(), BitmapEncoder.BitmapFormat.PNG);
  }

  public static void json(Path file, Object value) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    JSON.writeValue(file.toFile(), value);
  }

  /**
   * Writes an RFC 4180 CSV with a header: CRLF line ends, and a value holding a comma, a double
   * quote or a line break is enclosed in double quotes with its quotes doubled. Values are written
   * with {@link String#valueOf}, null as an empty field.
   */
  public static void csv(Path file, List<String> header, List<List<Object>> rows)
      throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    try (CSVPrinter printer = CSVFormat.RFC4180.print(file, StandardCharsets.UTF_8)) {
      printer.printRecord(header);
      printer.printRecords(rows);
    }
  }
}
