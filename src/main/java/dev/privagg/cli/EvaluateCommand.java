package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import dev.privagg.sim.Central;
import dev.privagg.sim.Evaluation;
import dev.privagg.sim.Reports;
import dev.privagg.sim.Simulation;
import dev.privagg.sim.SimulationConfig;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.markers.SeriesMarkers;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/** {@code privagg evaluate}: privacy/utility sweep with CSV, JSON and PNG plots. */
@Command(
    name = "evaluate",
    mixinStandardHelpOptions = true,
    description = {
      "Sweep noise multipliers and cohort sizes through the real pipeline, several seeds each.",
      "Reports epsilon, test accuracy and membership-inference AUC (95%% CIs) against a",
      "non-private baseline (with --central also a centrally trained one), and writes",
      "evaluation.csv, evaluation.json and three PNG plots (accuracy per round, accuracy",
      "and AUC vs epsilon). Accuracy CIs: Student-t over seeds, or with one seed the",
      "Wilson interval on the test set.",
      "With --variants it compares fixed against adaptive clipping and server optimizers at",
      "one --target-epsilon instead (each variant's noise multiplier planned by its job spec)",
      "and writes comparison.csv, comparison.json and comparison.png."
    })
final class EvaluateCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @Mixin SimulationOptions options;

  @Option(
      names = "--noise-multipliers",
      split = ",",
      defaultValue = "0.6,1.0,2.0",
      description = "Server noise multipliers to sweep (default 0.6,1.0,2.0).")
  List<Double> noiseMultipliers;

  @Option(
      names = "--cohorts",
      split = ",",
      description = "Cohort sizes m to sweep (default: --cohort).")
  List<Integer> cohorts;

  @Option(
      names = "--variants",
      split = ",",
      paramLabel = "CLIPPING-OPTIMIZER[:SERVER_LR]",
      description =
          "Compare these variants at --target-epsilon instead of sweeping noise multipliers:"
              + " CLIPPING fixed (C = --clip-norm) or adaptive (initial C = --clip-norm, target"
              + " quantile --adaptive-clipping, default 0.5), OPTIMIZER sgd, avgm, adam or yogi,"
              + " SERVER_LR its learning rate (default 1 for sgd and avgm, 0.01 for adam and"
              + " yogi), e.g. fixed-sgd,adaptive-sgd,fixed-adam:0.03,adaptive-adam:0.03."
              + " --server-momentum, --server-beta1, --server-beta2 and --server-tau apply to the"
              + " variants that use them.")
  List<String> variants;

  @Option(
      names = "--target-epsilon",
      description =
          "With --variants: the epsilon every variant spends over --rounds; each variant's job"
              + " spec plans its noise multiplier (default 4).")
  Double targetEpsilon;

  @Option(names = "--seeds", defaultValue = "3", description = "Seeds per setting (default 3).")
  int seeds;

  @Option(
      names = "--out",
      defaultValue = "evaluation-output",
      description = "Output folder (default evaluation-output).")
  Path out;

  @Mixin SimulationBrokerOptions broker;

  @Option(
      names = "--central",
      description =
          "Also train the same model centrally on the pooled training data (same trainer and"
              + " initial weights, no federation, clipping or noise), once per seed.")
  boolean central;

  @Option(
      names = "--central-epochs",
      defaultValue = "20",
      description = "Epochs of the central baseline (default 20).")
  int centralEpochs;

  @Option(
      names = "--central-batch-size",
      defaultValue = "32",
      description = "Minibatch size of the central baseline (default 32).")
  int centralBatchSize;

  @Option(
      names = "--central-lr",
      defaultValue = "0.1",
      description = "Learning rate of the central baseline (default 0.1).")
  double centralLr;

  @Mixin JsonOption json;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    flags.atLeastOne("--seeds", seeds);
    flags.atLeastOne("--central-epochs", centralEpochs);
    flags.atLeastOne("--central-batch-size", centralBatchSize);
    flags.positive("--central-lr", centralLr);
    for (double z : noiseMultipliers) {
      flags.positive("--noise-multipliers", z);
    }
    if (variants != null) {
      return compare(flags);
    }
    if (targetEpsilon != null) {
      throw flags.fail(
          "--target-epsilon sets the epsilon of a comparison: add --variants, or sweep noise"
              + " multipliers with --noise-multipliers");
    }
    List<Integer> sweepCohorts = cohorts == null ? List.of(options.cohort) : cohorts;
    SimulationConfig base = options.config(flags, noiseMultipliers.get(0), Double.NaN);
    PrintWriter w = spec.commandLine().getOut();
    int total = sweepCohorts.size() * (noiseMultipliers.size() + 1) * seeds;
    if (!json.enabled) {
      w.printf(
          "evaluating %d runs of %d rounds (%s, %s, %d clients, %s sampling)%n",
          total, options.rounds, options.dataset, options.model, options.clients, options.sampling);
      w.flush();
    }
    Evaluation.Interval centralAccuracy = null;
    List<Central.Result> centralRuns = new ArrayList<>();
    if (central) {
      for (int s = 0; s < seeds; s++) {
        SimulationConfig c = base.toBuilder().seed(base.seed() + s).build();
        Central.Result result =
            Central.train(
                c,
                centralEpochs,
                centralBatchSize,
                centralLr,
                e -> {
                  if (json.enabled) {
                    Output.line(
                        w,
                        Output.fields(
                            "type", "centralEpoch",
                            "seed", c.seed(),
                            "epoch", e.epoch(),
                            "accuracy", Output.number(e.accuracy()),
                            "millis", e.millis()));
                  } else {
                    w.printf(
                            "central, seed %d: epoch %d accuracy %.4f (%.1f s)%n",
                            c.seed(), e.epoch(), e.accuracy(), e.millis() / 1000.0)
                        .flush();
                  }
                });
        centralRuns.add(result);
      }
      centralAccuracy =
          Evaluation.accuracyInterval(
              centralRuns.stream().mapToDouble(Central.Result::finalAccuracy).toArray(),
              centralRuns.get(0).testSize());
    }
    List<Evaluation.Run> runs;
    int[] done = {0};
    java.util.function.Consumer<Simulation.RoundResult> rounds =
        r -> {
          // Round progress is for people; a run's JSON line carries what it came to.
          if (!json.enabled && (r.round() % 25 == 0 || r.sentAfterDeadline())) {
            RoundProgress.print(w, r);
          }
        };
    runs =
        broker.run(
            kafka ->
                Evaluation.sweep(
                    base,
                    sweepCohorts,
                    noiseMultipliers,
                    seeds,
                    kafka,
                    rounds,
                    r -> report(w, json.enabled, r, ++done[0], total)));
    List<Evaluation.Setting> settings = Evaluation.summarise(runs);
    write(settings, runs, centralAccuracy, centralRuns);
    if (json.enabled) {
      Output.line(w, summaryFields(settings, centralAccuracy, centralRuns.size()));
      return 0;
    }
    w.println();
    w.printf(
        "%-6s %-8s %-10s %-32s %-18s%n",
        "cohort", "z", "epsilon", "accuracy (95% CI)", "MIA AUC (95% CI)");
    for (Evaluation.Setting s : settings) {
      w.printf(
          "%-6d %-8s %-10s %.4f [%.4f, %.4f]         %.3f +- %.3f%n",
          s.cohort(),
          Text.number(s.noiseMultiplier()),
          Text.number(s.epsilon()),
          s.accuracy(),
          s.accuracyLow(),
          s.accuracyHigh(),
          s.auc(),
          s.aucHalfWidth());
    }
    if (centralAccuracy != null) {
      w.printf(
          "central (pooled data, %d epochs): accuracy %.4f [%.4f, %.4f]%n",
          centralEpochs, centralAccuracy.mean(), centralAccuracy.low(), centralAccuracy.high());
    }
    w.printf("accuracy intervals: %s%n", settings.get(0).accuracyInterval());
    w.printf("outputs: %s%n", out.toAbsolutePath());
    w.flush();
    return 0;
  }

  private static void report(PrintWriter w, boolean json, Evaluation.Run r, int done, int total) {
    if (json) {
      Output.line(
          w,
          Output.fields(
              "type", "run",
              "run", done,
              "runs", total,
              "variant", r.variant(),
              "cohort", r.cohort(),
              "noiseMultiplier", r.noiseMultiplier(),
              "seed", r.seed(),
              "epsilon", Output.number(r.epsilon()),
              "accuracy", Output.number(r.accuracy()),
              "membershipAuc", Output.number(r.auc()),
              "testSize", r.testSize(),
              "roundsSentAfterDeadline", r.roundsSentAfterDeadline(),
              "finalClipNorm", Output.number(r.finalClipNorm())));
      return;
    }
    w.printf(
        "[%d/%d] %s, cohort %d, z %s, seed %d: epsilon %s, accuracy %.4f, AUC %.3f%s%n",
        done,
        total,
        r.variant(),
        r.cohort(),
        Text.number(r.noiseMultiplier()),
        r.seed(),
        Text.number(r.epsilon()),
        r.accuracy(),
        r.auc(),
        r.roundsSentAfterDeadline() == 0
            ? ""
            : ", " + r.roundsSentAfterDeadline() + " rounds sent after the deadline");
    w.flush();
  }

  /** The final JSON line: each setting's summary over seeds, the central baseline, the outputs. */
  private Map<String, Object> summaryFields(
      List<Evaluation.Setting> settings, Evaluation.Interval central, int centralSeeds) {
    List<Object> rows = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      rows.add(
          Output.fields(
              "cohort", s.cohort(),
              "noiseMultiplier", s.noiseMultiplier(),
              "epsilon", Output.number(s.epsilon()),
              "seeds", s.seeds(),
              "accuracy", Output.number(s.accuracy()),
              "accuracyCi95Low", Output.number(s.accuracyLow()),
              "accuracyCi95High", Output.number(s.accuracyHigh()),
              "accuracyInterval", s.accuracyInterval(),
              "membershipAuc", Output.number(s.auc()),
              "membershipAucCi95", Output.number(s.aucHalfWidth())));
    }
    return Output.fields(
        "type",
        "summary",
        "dataset",
        options.dataset,
        "model",
        options.model,
        "clients",
        options.clients,
        "sampling",
        options.sampling,
        "rounds",
        options.rounds,
        "delta",
        options.delta,
        "settings",
        rows,
        "central",
        central == null
            ? null
            : Output.fields(
                "epochs", centralEpochs,
                "seeds", centralSeeds,
                "accuracy", Output.number(central.mean()),
                "accuracyCi95Low", Output.number(central.low()),
                "accuracyCi95High", Output.number(central.high()),
                "accuracyInterval", central.kind()),
        "outputs",
        out.toAbsolutePath().toString());
  }

  private void write(
      List<Evaluation.Setting> settings,
      List<Evaluation.Run> runs,
      Evaluation.Interval centralAccuracy,
      List<Central.Result> centralRuns)
      throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      rows.add(
          List.of(
              s.variant(),
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
    }
    if (centralAccuracy != null) {
      rows.add(
          Arrays.asList(
              "central",
              null,
              null,
              null,
              centralRuns.size(),
              centralAccuracy.mean(),
              centralAccuracy.low(),
              centralAccuracy.high(),
              centralAccuracy.kind(),
              null,
              null));
    }
    Reports.csv(
        out.resolve("evaluation.csv"),
        List.of(
            "variant",
            "cohort",
            "noiseMultiplier",
            "epsilon",
            "seeds",
            "accuracy",
            "accuracyCi95Low",
            "accuracyCi95High",
            "accuracyInterval",
            "membershipAuc",
            "membershipAucCi95"),
        rows);
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("dataset", options.dataset);
    json.put("model", options.model);
    json.put("clients", options.clients);
    json.put("sampling", options.sampling);
    json.put("rounds", options.rounds);
    json.put("delta", options.delta);
    json.put("settings", settings);
    json.put("runs", runs);
    if (centralAccuracy != null) {
      Map<String, Object> c = new LinkedHashMap<>();
      c.put("epochs", centralEpochs);
      c.put("batchSize", centralBatchSize);
      c.put("learningRate", centralLr);
      c.put("accuracy", centralAccuracy);
      c.put("runs", centralRuns);
      json.put("central", c);
    }
    Reports.json(out.resolve("evaluation.json"), json);
    String title =
        options.dataset
            + ", "
            + options.model
            + ", "
            + options.clients
            + " clients, "
            + options.rounds
            + " rounds";
    perRoundChart(settings, centralAccuracy, title);
    List<Reports.Series> accuracy = new ArrayList<>();
    List<Reports.Series> auc = new ArrayList<>();
    for (int cohort : settings.stream().map(Evaluation.Setting::cohort).distinct().toList()) {
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
      double[] eps = priv.stream().mapToDouble(Evaluation.Setting::epsilon).toArray();
      accuracy.add(
          new Reports.Series(
              "m = " + cohort,
              eps,
              priv.stream().mapToDouble(Evaluation.Setting::accuracy).toArray(),
              priv.stream().mapToDouble(s -> (s.accuracyHigh() - s.accuracyLow()) / 2).toArray()));
      auc.add(
          new Reports.Series(
              "m = " + cohort,
              eps,
              priv.stream().mapToDouble(Evaluation.Setting::auc).toArray(),
              priv.stream().mapToDouble(Evaluation.Setting::aucHalfWidth).toArray()));
      double[] span = {eps[0], eps[eps.length - 1]};
      accuracy.add(
          new Reports.Series(
              "non-private, m = " + cohort,
              span,
              new double[] {baseline.accuracy(), baseline.accuracy()},
              null));
      auc.add(
          new Reports.Series(
              "non-private, m = " + cohort,
              span,
              new double[] {baseline.auc(), baseline.auc()},
              null));
    }
    Reports.lineChart(
        out.resolve("accuracy-vs-epsilon.png"),
        title + ": test accuracy",
        "epsilon (delta " + Text.number(options.delta) + ")",
        "test accuracy (95% CI)",
        accuracy,
        null,
        null);
    Reports.lineChart(
        out.resolve("auc-vs-epsilon.png"),
        title + ": membership inference",
        "epsilon (delta " + Text.number(options.delta) + ")",
        "loss-threshold attack AUC (95% CI)",
        auc,
        null,
        null);
  }

  /** Test accuracy after every round, per setting (mean over seeds), with the central line. */
  private void perRoundChart(
      List<Evaluation.Setting> settings, Evaluation.Interval centralAccuracy, String title)
      throws Exception {
    List<Reports.Series> series = new ArrayList<>();
    int rounds = 0;
    for (Evaluation.Setting s : settings) {
      double[] y = s.accuracyPerRound();
      rounds = Math.max(rounds, y.length);
      double[] x = new double[y.length];
      for (int i = 0; i < x.length; i++) {
        x[i] = i + 1;
      }
      String name =
          s.noiseMultiplier() == 0
              ? "non-private, m = " + s.cohort()
              : "z = "
                  + Text.number(s.noiseMultiplier())
                  + ", m = "
                  + s.cohort()
                  + " (epsilon "
                  + String.format("%.2f", s.epsilon())
                  + ")";
      series.add(new Reports.Series(name, x, y, null));
    }
    if (centralAccuracy != null && rounds > 0) {
      series.add(
          new Reports.Series(
              "central, pooled data (" + centralEpochs + " epochs)",
              new double[] {1, rounds},
              new double[] {centralAccuracy.mean(), centralAccuracy.mean()},
              null));
    }
    XYChart chart =
        Reports.chart(
            title + " (" + options.sampling + " sampling): test accuracy per round",
            "round",
            "test accuracy",
            series);
    chart.getSeriesMap().values().forEach(s -> s.setMarker(SeriesMarkers.NONE));
    Reports.savePng(out.resolve("accuracy-per-round.png"), List.of(chart));
  }

  /** --variants: every variant at one target epsilon, several seeds each. */
  private int compare(Flags flags) throws Exception {
    ParseResult parsed = spec.commandLine().getParseResult();
    for (String sweepOnly : List.of("--noise-multipliers", "--cohorts", "--central")) {
      if (parsed.hasMatchedOption(sweepOnly)) {
        throw flags.fail(
            sweepOnly
                + " belongs to the noise sweep; --variants compares at one --target-epsilon and"
                + " --cohort: drop one of them");
      }
    }
    for (String perVariant : List.of("--server-optimizer", "--server-lr")) {
      if (parsed.hasMatchedOption(perVariant)) {
        throw flags.fail(
            perVariant
                + ": with --variants each variant names its optimizer and server learning rate,"
                + " e.g. fixed-adam:0.03; drop "
                + perVariant);
      }
    }
    double epsilon =
        flags.positive("--target-epsilon", targetEpsilon == null ? 4.0 : targetEpsilon);
    // Adaptive settings (--adaptive-clipping, default quantile 0.5) belong to adaptive variants.
    Double quantile = variants.stream().anyMatch(t -> t.trim().startsWith("adaptive")) ? 0.5 : null;
    SimulationConfig base = options.config(flags, Double.NaN, epsilon, quantile);
    SimulationConfig.AdaptiveClipping adaptive = base.adaptiveClipping();
    List<Evaluation.Variant> parsedVariants = new ArrayList<>();
    for (String text : variants) {
      Evaluation.Variant v;
      try {
        v =
            Evaluation.Variant.parse(
                text, adaptive, (kind, lr) -> options.serverOptimizer(flags, kind, lr));
      } catch (IllegalArgumentException e) {
        throw flags.fail("--variants: " + e.getMessage());
      }
      if (parsedVariants.stream().anyMatch(p -> p.name().equals(v.name()))) {
        throw flags.fail("--variants names " + v.name() + " twice; give each variant once");
      }
      parsedVariants.add(v);
    }
    // Every variant's spec is planned before the broker starts: an unreachable target fails now.
    List<JobSpec> planned = Evaluation.plan(base, parsedVariants);
    // The outputs state the count noise the specs resolved (m / 20 unless given), not "default".
    for (int i = 0; i < planned.size(); i++) {
      Evaluation.Variant v = parsedVariants.get(i);
      if (v.adaptiveClipping() != null) {
        SimulationConfig.AdaptiveClipping a = v.adaptiveClipping();
        parsedVariants.set(
            i,
            new Evaluation.Variant(
                v.name(),
                new SimulationConfig.AdaptiveClipping(
                    a.targetQuantile(),
                    a.learningRate(),
                    planned.get(i).privacy().adaptiveClipping().countNoiseStd()),
                v.optimizer()));
      }
    }
    PrintWriter w = spec.commandLine().getOut();
    int total = parsedVariants.size() * seeds;
    if (!json.enabled) {
      w.printf(
          "comparing %d variants at epsilon %s over %d rounds, %d seed%s each (%s, %s, %d"
              + " clients, m = %d, %s sampling)%n",
          parsedVariants.size(),
          Text.number(epsilon),
          options.rounds,
          seeds,
          seeds == 1 ? "" : "s",
          options.dataset,
          options.model,
          options.clients,
          options.cohort,
          options.sampling);
      for (int i = 0; i < planned.size(); i++) {
        JobSpec.Privacy p = planned.get(i).privacy();
        w.printf(
            "  %-20s z %.4f, C %s%s, server %s%n",
            parsedVariants.get(i).name(),
            p.noiseMultiplier(),
            Text.number(p.clipNorm()),
            p.adaptiveClipping() == null
                ? " fixed"
                : " initial, adaptive to quantile "
                    + Text.number(p.adaptiveClipping().targetQuantile())
                    + " (count noise std "
                    + Text.number(p.adaptiveClipping().countNoiseStd())
                    + ")",
            planned.get(i).serverOptimizer().kind().specName()
                + " lr "
                + Text.number(planned.get(i).serverOptimizer().learningRate()));
      }
      w.flush();
    }
    int[] done = {0};
    java.util.function.Consumer<Simulation.RoundResult> rounds =
        r -> {
          if (!json.enabled && (r.round() % 25 == 0 || r.sentAfterDeadline())) {
            RoundProgress.print(w, r);
          }
        };
    java.util.function.Consumer<Evaluation.Run> each =
        r -> report(w, json.enabled, r, ++done[0], total);
    List<Evaluation.Run> runs;
    runs =
        broker.run(kafka -> Evaluation.compare(base, parsedVariants, seeds, kafka, rounds, each));
    List<Evaluation.Setting> settings = Evaluation.summarise(runs);
    Map<String, Evaluation.Variant> byName = new LinkedHashMap<>();
    parsedVariants.forEach(v -> byName.put(v.name(), v));
    writeComparison(settings, runs, byName, epsilon);
    if (json.enabled) {
      List<Object> rows = new ArrayList<>();
      for (Evaluation.Setting s : settings) {
        Evaluation.Variant v = byName.get(s.variant());
        rows.add(
            Output.fields(
                "variant", s.variant(),
                "serverOptimizer", v.optimizer().kind().specName(),
                "serverLearningRate", v.optimizer().learningRate(),
                "adaptiveClipping", v.adaptiveClipping() != null,
                "noiseMultiplier", s.noiseMultiplier(),
                "epsilon", Output.number(s.epsilon()),
                "seeds", s.seeds(),
                "accuracy", Output.number(s.accuracy()),
                "accuracyCi95Low", Output.number(s.accuracyLow()),
                "accuracyCi95High", Output.number(s.accuracyHigh()),
                "accuracyInterval", s.accuracyInterval(),
                "membershipAuc", Output.number(s.auc()),
                "membershipAucCi95", Output.number(s.aucHalfWidth()),
                "finalClipNorm", Output.number(s.finalClipNorm())));
      }
      Output.line(
          w,
          Output.fields(
              "type", "summary",
              "dataset", options.dataset,
              "model", options.model,
              "clients", options.clients,
              "expectedClients", options.cohort,
              "sampling", options.sampling,
              "rounds", options.rounds,
              "targetEpsilon", epsilon,
              "delta", options.delta,
              "variants", rows,
              "outputs", out.toAbsolutePath().toString()));
      return 0;
    }
    w.println();
    w.printf(
        "%-20s %-10s %-8s %-9s %-9s %-28s %-16s%n",
        "variant", "server lr", "z", "epsilon", "final C", "accuracy (95% CI)", "MIA AUC (95% CI)");
    for (Evaluation.Setting s : settings) {
      w.printf(
          "%-20s %-10s %-8s %-9s %-9s %.4f [%.4f, %.4f]     %.3f +- %.3f%n",
          s.variant(),
          Text.number(byName.get(s.variant()).optimizer().learningRate()),
          String.format("%.4f", s.noiseMultiplier()),
          String.format("%.3f", s.epsilon()),
          Text.number(s.finalClipNorm()),
          s.accuracy(),
          s.accuracyLow(),
          s.accuracyHigh(),
          s.auc(),
          s.aucHalfWidth());
    }
    w.printf("accuracy intervals: %s%n", settings.get(0).accuracyInterval());
    w.printf("outputs: %s%n", out.toAbsolutePath());
    w.flush();
    return 0;
  }

  /** comparison.csv, comparison.json and comparison.png (accuracy with CIs, and per round). */
  private void writeComparison(
      List<Evaluation.Setting> settings,
      List<Evaluation.Run> runs,
      Map<String, Evaluation.Variant> variants,
      double epsilon)
      throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      Evaluation.Variant v = variants.get(s.variant());
      rows.add(
          List.of(
              s.variant(),
              v.adaptiveClipping() == null ? "fixed" : "adaptive",
              v.optimizer().kind().specName(),
              v.optimizer().learningRate(),
              s.cohort(),
              s.noiseMultiplier(),
              s.epsilon(),
              s.seeds(),
              s.accuracy(),
              s.accuracyLow(),
              s.accuracyHigh(),
              s.accuracyInterval(),
              s.auc(),
              s.aucHalfWidth(),
              s.finalClipNorm()));
    }
    Reports.csv(
        out.resolve("comparison.csv"),
        List.of(
            "variant",
            "clipping",
            "serverOptimizer",
            "serverLearningRate",
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
            "finalClipNorm"),
        rows);
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("dataset", options.dataset);
    json.put("model", options.model);
    json.put("clients", options.clients);
    json.put("expectedClients", options.cohort);
    json.put("sampling", options.sampling);
    json.put("rounds", options.rounds);
    json.put("targetEpsilon", epsilon);
    json.put("delta", options.delta);
    json.put("initialClipNorm", options.clipNorm);
    json.put("variants", variants.values());
    json.put("settings", settings);
    json.put("runs", runs);
    Reports.json(out.resolve("comparison.json"), json);
    String title =
        options.dataset
            + ", "
            + options.model
            + ", "
            + options.clients
            + " clients, m = "
            + options.cohort
            + ", "
            + options.rounds
            + " rounds, epsilon "
            + Text.number(epsilon);
    Reports.Interval[] intervals =
        settings.stream()
            .map(
                s ->
                    new Reports.Interval(
                        s.variant(), s.accuracy(), s.accuracyLow(), s.accuracyHigh()))
            .toArray(Reports.Interval[]::new);
    List<Reports.Series> perRound = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      double[] y = s.accuracyPerRound();
      double[] x = new double[y.length];
      for (int i = 0; i < x.length; i++) {
        x[i] = i + 1;
      }
      perRound.add(
          new Reports.Series(
              s.variant() + " (z " + String.format("%.3f", s.noiseMultiplier()) + ")", x, y, null));
    }
    XYChart rounds =
        Reports.chart(
            "test accuracy per round (mean over " + settings.get(0).seeds() + " seeds)",
            "round",
            "test accuracy",
            perRound);
    rounds.getSeriesMap().values().forEach(s -> s.setMarker(SeriesMarkers.NONE));
    Reports.savePng(
        out.resolve("comparison.png"),
        List.<Chart<?, ?>>of(
            Reports.intervalChart(
                title + ": final test accuracy",
                "test accuracy (95% CI, " + settings.get(0).accuracyInterval() + ")",
                List.of(intervals)),
            rounds));
  }

  @Override
  public KafkaConnection kafka() {
    return broker.connection();
  }

  @Override
  public String attempt() {
    return "run the evaluation";
  }
}
