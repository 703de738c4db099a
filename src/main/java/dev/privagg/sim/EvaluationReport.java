package dev.privagg.sim;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The files of an evaluation, one writer for both kinds: {@code NAME.csv} with a row per setting,
 * {@code NAME.json} with the setup, every setting and every run, and PNG charts. A noise sweep
 * ({@link #sweep}) is {@code evaluation.*} with accuracy per round and accuracy and AUC against
 * epsilon; a comparison of variants ({@link #comparison}) is {@code comparison.*} with one PNG of
 * the final accuracies and the accuracy per round.
 *
 * @param name the CSV's and the JSON's file name without extension
 * @param pngs each PNG's file name and its charts, side by side
 */
public record EvaluationReport(
    String name,
    List<String> header,
    List<List<Object>> rows,
    Map<String, Object> json,
    Map<String, List<Chart<?, ?>>> pngs) {

  /** Every setting's columns, after the ones that name it. */
  private static final List<String> SETTING_COLUMNS =
      List.of(
          "cohort",
          "noiseMultiplier",
          "epsilon",
          "seeds",
          "accuracy",
          "accuracyCi95Low",
          "accuracyCi95High",
          "accuracyInterval",
          "membershipAuc",
          "membershipAucCi95",
          "epsilonHat",
          "oneRunFdpEpsilon");

  /** Writes every file into {@code dir}, creating it when missing. */
  public void writeTo(Path dir) throws IOException {
    Reports.csv(dir.resolve(name + ".csv"), header, rows);
    Reports.json(dir.resolve(name + ".json"), json);
    for (Map.Entry<String, List<Chart<?, ?>>> png : pngs.entrySet()) {
      Reports.savePng(dir.resolve(png.getKey()), png.getValue());
    }
  }

  /**
   * A noise sweep on {@code base}'s data, model and clients: its settings, runs and the central
   * baseline (null without one).
   */
  public static EvaluationReport sweep(
      SimulationConfig base,
      List<Evaluation.Setting> settings,
      List<Evaluation.Run> runs,
      CentralBaseline central) {
    return new EvaluationReport(
        "evaluation",
        header(List.of("variant"), List.of()),
        sweepRows(settings, central),
        sweepJson(base, settings, runs, central),
        sweepCharts(base, settings, central));
  }

  /**
   * A comparison of {@code variants} on {@code base} (its cohort, rounds and target epsilon): their
   * settings and runs.
   */
  public static EvaluationReport comparison(
      SimulationConfig base,
      List<Evaluation.Variant> variants,
      List<Evaluation.Setting> settings,
      List<Evaluation.Run> runs) {
    return new EvaluationReport(
        "comparison",
        header(
            List.of("variant", "clipping", "serverOptimizer", "serverLearningRate"),
            List.of("finalClipNorm")),
        comparisonRows(variants, settings),
        comparisonJson(base, variants, settings, runs),
        withAuditChart(
            "comparison.png",
            comparisonCharts(base, settings),
            comparisonTitle(base),
            audited(settings, Evaluation.Setting::variant)));
  }

  /**
   * A comparison of noise mechanisms ({@link MechanismComparison}) on {@code base}: a row per
   * mechanism, and one PNG of the final accuracies and the accuracy per round.
   */
  public static EvaluationReport mechanisms(
      SimulationConfig base,
      List<MechanismComparison.Row> rows,
      List<Evaluation.Setting> settings,
      List<Evaluation.Run> runs) {
    List<String> header =
        List.of(
            "mechanism",
            "sampling",
            "noiseMultiplier",
            "noiseStdPerRound",
            "modelNoiseStd",
            "epsilon",
            "jobEpsilon",
            "seeds",
            "accuracy",
            "accuracyCi95Low",
            "accuracyCi95High",
            "accuracyInterval",
            "updatesSent",
            "updatesUsed",
            "participationRejects",
            "epsilonHat",
            "oneRunFdpEpsilon");
    List<List<Object>> cells = new ArrayList<>();
    for (MechanismComparison.Row r : rows) {
      Evaluation.Setting audit =
          settings.stream()
              .filter(x -> x.variant().equals(r.mechanism()))
              .findFirst()
              .orElseThrow();
      cells.add(
          Arrays.asList(
              r.mechanism(),
              r.sampling(),
              r.noiseMultiplier(),
              r.noiseStdPerRound(),
              r.modelNoiseStd(),
              r.epsilon(),
              r.jobEpsilon(),
              r.seeds(),
              r.accuracy(),
              r.accuracyCi95Low(),
              r.accuracyCi95High(),
              r.accuracyInterval(),
              r.updatesSent(),
              r.updatesUsed(),
              r.participationRejects(),
              finiteOrNull(audit.epsilonHat()),
              finiteOrNull(audit.oneRunFdpEpsilon())));
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("dataset", base.dataset());
    json.put("model", base.model());
    json.put("clients", base.clients());
    json.put("expectedClients", base.expectedClients());
    json.put("rounds", base.rounds());
    json.put("minSeparation", base.minSeparation());
    json.put("maxParticipations", base.maxParticipations());
    json.put("targetEpsilon", base.targetEpsilon());
    json.put("delta", base.delta());
    json.put("accountant", MechanismComparison.ACCOUNTANT);
    json.put("mechanisms", rows);
    json.put("settings", settings);
    json.put("runs", runs);
    String title = comparisonTitle(base);
    List<Reports.Interval> finals =
        rows.stream()
            .map(
                r ->
                    new Reports.Interval(
                        r.mechanism(), r.accuracy(), r.accuracyCi95Low(), r.accuracyCi95High()))
            .toList();
    List<Reports.Series> perRound = new ArrayList<>();
    for (MechanismComparison.Row r : rows) {
      Evaluation.Setting s =
          settings.stream()
              .filter(x -> x.variant().equals(r.mechanism()))
              .findFirst()
              .orElseThrow();
      perRound.add(
          perRound(r.mechanism() + " (z " + String.format("%.3f", r.noiseMultiplier()) + ")", s));
    }
    List<Chart<?, ?>> charts =
        List.of(
            Reports.intervalChart(
                title + ": final test accuracy",
                "test accuracy (95% CI, " + rows.get(0).accuracyInterval() + ")",
                finals),
            perRoundChart(
                "test accuracy per round (mean over " + rows.get(0).seeds() + " seeds)", perRound));
    return new EvaluationReport(
        "mechanisms",
        header,
        cells,
        json,
        withAuditChart(
            "mechanisms.png",
            charts,
            title,
            // Each mechanism at the epsilon the table states: independent-k's K-participation
            // bound.
            rows.stream()
                .map(
                    r ->
                        new Audited(
                            r.mechanism(),
                            r.epsilon(),
                            settings.stream()
                                .filter(x -> x.variant().equals(r.mechanism()))
                                .findFirst()
                                .orElseThrow()
                                .epsilonHat()))
                .toList()));
  }

  private static List<List<Object>> sweepRows(
      List<Evaluation.Setting> settings, CentralBaseline central) {
    List<List<Object>> rows = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      rows.add(row(List.of(s.variant()), s, List.of()));
    }
    if (central != null) {
      rows.add(centralRow(central));
    }
    return rows;
  }

  private static Map<String, Object> sweepJson(
      SimulationConfig base,
      List<Evaluation.Setting> settings,
      List<Evaluation.Run> runs,
      CentralBaseline central) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("dataset", base.dataset());
    json.put("model", base.model());
    json.put("clients", base.clients());
    json.put("sampling", base.sampling());
    json.put("rounds", base.rounds());
    json.put("delta", base.delta());
    json.put("settings", settings);
    json.put("runs", runs);
    if (central != null) {
      json.put("central", centralJson(central));
    }
    return json;
  }

  /** Accuracy per round; accuracy and attack AUC against epsilon, one line per cohort. */
  private static Map<String, List<Chart<?, ?>>> sweepCharts(
      SimulationConfig base, List<Evaluation.Setting> settings, CentralBaseline central) {
    String title =
        base.dataset()
            + ", "
            + base.model()
            + ", "
            + base.clients()
            + " clients, "
            + base.rounds()
            + " rounds";
    String epsilonAxis = "epsilon (delta " + NumberText.of(base.delta()) + ")";
    Map<String, List<Chart<?, ?>>> pngs = new LinkedHashMap<>();
    pngs.put(
        "accuracy-per-round.png",
        List.of(
            perRoundChart(
                title + " (" + base.sampling() + " sampling): test accuracy per round",
                sweepPerRound(settings, central))));
    pngs.put(
        "accuracy-vs-epsilon.png",
        List.of(
            Reports.chart(
                title + ": test accuracy",
                epsilonAxis,
                "test accuracy (95% CI)",
                againstEpsilon(
                    settings,
                    Evaluation.Setting::accuracy,
                    s -> (s.accuracyHigh() - s.accuracyLow()) / 2))));
    pngs.put(
        "auc-vs-epsilon.png",
        List.of(
            Reports.chart(
                title + ": membership inference",
                epsilonAxis,
                "loss-threshold attack AUC (95% CI)",
                againstEpsilon(
                    settings, Evaluation.Setting::auc, Evaluation.Setting::aucHalfWidth))));
    addAuditChart(pngs, title, audited(settings, EvaluationReport::sweptSettingName));
    return pngs;
  }

  /** One point of the audit chart: a setting's stated epsilon and its audit's epsilon-hat. */
  private record Audited(String name, double epsilon, double epsilonHat) {}

  /**
   * With canaries, {@code audit.png}: each private setting's epsilon-hat (the audit's estimate)
   * against the epsilon it states, and the line where the two agree; a point above it is a claim
   * the releases do not bear out.
   */
  private static void addAuditChart(
      Map<String, List<Chart<?, ?>>> pngs, String title, List<Audited> points) {
    List<Audited> audited =
        points.stream()
            .filter(a -> Double.isFinite(a.epsilonHat()) && Double.isFinite(a.epsilon()))
            .toList();
    if (audited.isEmpty()) {
      return;
    }
    double top =
        audited.stream()
            .mapToDouble(a -> Math.max(a.epsilon(), a.epsilonHat()))
            .max()
            .orElseThrow();
    List<Reports.Series> series = new ArrayList<>();
    for (Audited a : audited) {
      series.add(
          new Reports.Series(
              a.name(), new double[] {a.epsilon()}, new double[] {a.epsilonHat()}, null));
    }
    series.add(
        new Reports.Series(
            "epsilon-hat = epsilon",
            new double[] {0, top * 1.1},
            new double[] {0, top * 1.1},
            null));
    XYChart chart =
        Reports.chart(
            title + ": canary audit",
            "epsilon stated",
            "epsilon-hat, one-shot estimate (Andrew et al.)",
            series);
    chart.getSeriesMap().get("epsilon-hat = epsilon").setMarker(SeriesMarkers.NONE);
    chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
    pngs.put("audit.png", List.of(chart));
  }

  /** Each setting as an audit point under {@code name}, at the epsilon its ledger states. */
  private static List<Audited> audited(
      List<Evaluation.Setting> settings, Function<Evaluation.Setting, String> name) {
    return settings.stream()
        .map(s -> new Audited(name.apply(s), s.epsilon(), s.epsilonHat()))
        .toList();
  }

  /** {@code png} with its charts, and the audit chart when there are canaries. */
  private static Map<String, List<Chart<?, ?>>> withAuditChart(
      String png, List<Chart<?, ?>> charts, String title, List<Audited> points) {
    Map<String, List<Chart<?, ?>>> pngs = new LinkedHashMap<>();
    pngs.put(png, charts);
    addAuditChart(pngs, title, points);
    return pngs;
  }

  private static List<List<Object>> comparisonRows(
      List<Evaluation.Variant> variants, List<Evaluation.Setting> settings) {
    Map<String, Evaluation.Variant> byName = Evaluation.Variant.byName(variants);
    List<List<Object>> rows = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      Evaluation.Variant v = byName.get(s.variant());
      List<Object> naming =
          List.of(
              s.variant(),
              v.adaptiveClipping() == null ? "fixed" : "adaptive",
              v.optimizer().kind().specName(),
              v.optimizer().learningRate());
      rows.add(row(naming, s, List.of(s.finalClipNorm())));
    }
    return rows;
  }

  private static Map<String, Object> comparisonJson(
      SimulationConfig base,
      List<Evaluation.Variant> variants,
      List<Evaluation.Setting> settings,
      List<Evaluation.Run> runs) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("dataset", base.dataset());
    json.put("model", base.model());
    json.put("clients", base.clients());
    json.put("expectedClients", base.expectedClients());
    json.put("sampling", base.sampling());
    json.put("rounds", base.rounds());
    json.put("targetEpsilon", base.targetEpsilon());
    json.put("delta", base.delta());
    json.put("initialClipNorm", base.clipNorm());
    json.put("variants", variants);
    json.put("settings", settings);
    json.put("runs", runs);
    return json;
  }

  /** The charts' title of a comparison at one target epsilon. */
  private static String comparisonTitle(SimulationConfig base) {
    return base.dataset()
        + ", "
        + base.model()
        + ", "
        + base.clients()
        + " clients, m = "
        + base.expectedClients()
        + ", "
        + base.rounds()
        + " rounds, epsilon "
        + NumberText.of(base.targetEpsilon());
  }

  /** Each variant's final accuracy with its interval, and its accuracy per round. */
  private static List<Chart<?, ?>> comparisonCharts(
      SimulationConfig base, List<Evaluation.Setting> settings) {
    String title = comparisonTitle(base);
    List<Reports.Interval> finalAccuracies =
        settings.stream()
            .map(
                s ->
                    new Reports.Interval(
                        s.variant(), s.accuracy(), s.accuracyLow(), s.accuracyHigh()))
            .toList();
    List<Reports.Series> perRound =
        settings.stream()
            .map(
                s ->
                    perRound(
                        s.variant() + " (z " + String.format("%.3f", s.noiseMultiplier()) + ")", s))
            .toList();
    return List.of(
        Reports.intervalChart(
            title + ": final test accuracy",
            "test accuracy (95% CI, " + settings.get(0).accuracyInterval() + ")",
            finalAccuracies),
        perRoundChart(
            "test accuracy per round (mean over " + settings.get(0).seeds() + " seeds)", perRound));
  }

  private static List<String> header(List<String> naming, List<String> after) {
    return Stream.of(naming, SETTING_COLUMNS, after).flatMap(List::stream).toList();
  }

  /** A setting's row: the cells that name it, its {@link #SETTING_COLUMNS}, then {@code after}. */
  private static List<Object> row(List<?> naming, Evaluation.Setting s, List<?> after) {
    List<Object> row = new ArrayList<>(naming);
    row.addAll(
        List.of(
            s.cohort(),
            s.noiseMultiplier(),
            s.epsilon(),
            s.seeds(),
            s.accuracy(),
            s.accuracyLow(),
            s.accuracyHigh(),
            s.accuracyInterval(),
            s.auc(),
            s.aucHalfWidth()));
    row.add(finiteOrNull(s.epsilonHat()));
    row.add(finiteOrNull(s.oneRunFdpEpsilon()));
    row.addAll(after);
    return row;
  }

  /** The central baseline as a setting's row; it has no cohort, noise, epsilon or attack. */
  private static List<Object> centralRow(CentralBaseline central) {
    Evaluation.Interval accuracy = central.accuracy();
    return Arrays.asList(
        "central",
        null,
        null,
        null,
        central.runs().size(),
        accuracy.mean(),
        accuracy.low(),
        accuracy.high(),
        accuracy.kind(),
        null,
        null,
        null,
        null);
  }

  /** A number for a CSV cell: empty when it is NaN (no audit) rather than the text "NaN". */
  private static Double finiteOrNull(double value) {
    return Double.isNaN(value) ? null : value;
  }

  private static Map<String, Object> centralJson(CentralBaseline central) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("epochs", central.epochs());
    json.put("batchSize", central.batchSize());
    json.put("learningRate", central.learningRate());
    json.put("accuracy", central.accuracy());
    json.put("runs", central.runs());
    return json;
  }

  /** Each setting's accuracy per round, and the central baseline's final accuracy as a line. */
  private static List<Reports.Series> sweepPerRound(
      List<Evaluation.Setting> settings, CentralBaseline central) {
    List<Reports.Series> series = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      series.add(perRound(sweptSettingName(s), s));
    }
    int rounds = settings.stream().mapToInt(s -> s.accuracyPerRound().length).max().orElse(0);
    if (central != null && rounds > 0) {
      double accuracy = central.accuracy().mean();
      series.add(
          new Reports.Series(
              "central, pooled data (" + central.epochs() + " epochs)",
              new double[] {1, rounds},
              new double[] {accuracy, accuracy},
              null));
    }
    return series;
  }

  /** A swept setting in a legend: its noise, cohort and epsilon, or non-private. */
  private static String sweptSettingName(Evaluation.Setting s) {
    if (s.noiseMultiplier() == 0) {
      return "non-private, m = " + s.cohort();
    }
    return "z = "
        + NumberText.of(s.noiseMultiplier())
        + ", m = "
        + s.cohort()
        + " (epsilon "
        + String.format("%.2f", s.epsilon())
        + ")";
  }

  /** A setting's mean test accuracy after each round, at rounds 1, 2, ... */
  private static Reports.Series perRound(String name, Evaluation.Setting s) {
    double[] accuracy = s.accuracyPerRound();
    double[] rounds = IntStream.rangeClosed(1, accuracy.length).asDoubleStream().toArray();
    return new Reports.Series(name, rounds, accuracy, null);
  }

  /** Accuracy per round, drawn as lines: markers would hide them over many rounds. */
  private static XYChart perRoundChart(String title, List<Reports.Series> series) {
    XYChart chart = Reports.chart(title, "round", "test accuracy", series);
    chart.getSeriesMap().values().forEach(s -> s.setMarker(SeriesMarkers.NONE));
    return chart;
  }

  /**
   * Per cohort, {@code value} of the private settings with {@code halfWidth} error bars against
   * their epsilon, and the non-private baseline's as a flat line over the same epsilons.
   */
  private static List<Reports.Series> againstEpsilon(
      List<Evaluation.Setting> settings,
      ToDoubleFunction<Evaluation.Setting> value,
      ToDoubleFunction<Evaluation.Setting> halfWidth) {
    List<Reports.Series> series = new ArrayList<>();
    for (int cohort : settings.stream().mapToInt(Evaluation.Setting::cohort).distinct().toArray()) {
      List<Evaluation.Setting> priv =
          settings.stream()
              .filter(s -> s.cohort() == cohort && s.noiseMultiplier() > 0)
              .sorted((a, b) -> Double.compare(a.epsilon(), b.epsilon()))
              .toList();
      Evaluation.Setting baseline =
          settings.stream()
              .filter(s -> s.cohort() == cohort && s.noiseMultiplier() == 0)
              .findFirst()
              .orElseThrow();
      double[] epsilons = priv.stream().mapToDouble(Evaluation.Setting::epsilon).toArray();
      series.add(
          new Reports.Series(
              "m = " + cohort,
              epsilons,
              priv.stream().mapToDouble(value).toArray(),
              priv.stream().mapToDouble(halfWidth).toArray()));
      double flat = value.applyAsDouble(baseline);
      series.add(
          new Reports.Series(
              "non-private, m = " + cohort,
              new double[] {epsilons[0], epsilons[epsilons.length - 1]},
              new double[] {flat, flat},
              null));
    }
    return series;
  }
}
