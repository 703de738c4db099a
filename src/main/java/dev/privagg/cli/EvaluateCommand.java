package dev.privagg.cli;

import dev.privagg.sim.EmbeddedKafka;
import dev.privagg.sim.Evaluation;
import dev.privagg.sim.Reports;
import dev.privagg.sim.SimulationConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg evaluate}: privacy/utility sweep with CSV, JSON and PNG plots. */
@Command(
    name = "evaluate",
    mixinStandardHelpOptions = true,
    description = {
      "Sweep noise multipliers and cohort sizes through the real pipeline, several seeds each.",
      "Reports epsilon, test accuracy and membership-inference AUC (95% CIs) against a non-private",
      "baseline, and writes evaluation.csv, evaluation.json and two PNG plots."
    })
final class EvaluateCommand implements Callable<Integer> {
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

  @Option(names = "--seeds", defaultValue = "3", description = "Seeds per setting (default 3).")
  int seeds;

  @Option(
      names = "--out",
      defaultValue = "evaluation-output",
      description = "Output folder (default evaluation-output).")
  Path out;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "An existing Kafka broker (default: start one in-process).")
  String bootstrapServers;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    flags.atLeastOne("--seeds", seeds);
    for (double z : noiseMultipliers) {
      flags.positive("--noise-multipliers", z);
    }
    List<Integer> sweepCohorts = cohorts == null ? List.of(options.cohort) : cohorts;
    SimulationConfig base = options.config(noiseMultipliers.get(0), Double.NaN);
    PrintWriter w = spec.commandLine().getOut();
    int total = sweepCohorts.size() * (noiseMultipliers.size() + 1) * seeds;
    w.printf(
        "evaluating %d runs of %d rounds (%s, %s, %d clients)%n",
        total, options.rounds, options.dataset, options.model, options.clients);
    w.flush();
    List<Evaluation.Run> runs;
    int[] done = {0};
    if (bootstrapServers != null) {
      runs =
          Evaluation.sweep(
              base,
              sweepCohorts,
              noiseMultipliers,
              seeds,
              bootstrapServers,
              r -> report(w, r, ++done[0], total));
    } else {
      try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
        runs =
            Evaluation.sweep(
                base,
                sweepCohorts,
                noiseMultipliers,
                seeds,
                kafka.bootstrapServers(),
                r -> report(w, r, ++done[0], total));
      }
    }
    List<Evaluation.Setting> settings = Evaluation.summarise(runs);
    write(settings, runs);
    w.println();
    w.printf(
        "%-6s %-8s %-10s %-22s %-22s%n",
        "cohort", "z", "epsilon", "accuracy (95% CI)", "MIA AUC (95% CI)");
    for (Evaluation.Setting s : settings) {
      w.printf(
          "%-6d %-8s %-10s %.4f +- %.4f        %.3f +- %.3f%n",
          s.cohort(),
          Text.number(s.noiseMultiplier()),
          Text.number(s.epsilon()),
          s.accuracy(),
          s.accuracyHalfWidth(),
          s.auc(),
          s.aucHalfWidth());
    }
    w.printf("outputs: %s%n", out.toAbsolutePath());
    w.flush();
    return 0;
  }

  private static void report(PrintWriter w, Evaluation.Run r, int done, int total) {
    w.printf(
        "[%d/%d] cohort %d, z %s, seed %d: epsilon %s, accuracy %.4f, AUC %.3f%n",
        done,
        total,
        r.cohort(),
        Text.number(r.noiseMultiplier()),
        r.seed(),
        Text.number(r.epsilon()),
        r.accuracy(),
        r.auc());
    w.flush();
  }

  private void write(List<Evaluation.Setting> settings, List<Evaluation.Run> runs)
      throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      rows.add(
          List.of(
              s.cohort(),
              s.noiseMultiplier(),
              s.epsilon(),
              s.seeds(),
              s.accuracy(),
              s.accuracyHalfWidth(),
              s.auc(),
              s.aucHalfWidth()));
    }
    Reports.csv(
        out.resolve("evaluation.csv"),
        List.of(
            "cohort",
            "noiseMultiplier",
            "epsilon",
            "seeds",
            "accuracy",
            "accuracyCi95",
            "membershipAuc",
            "membershipAucCi95"),
        rows);
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("dataset", options.dataset);
    json.put("model", options.model);
    json.put("clients", options.clients);
    json.put("rounds", options.rounds);
    json.put("delta", options.delta);
    json.put("settings", settings);
    json.put("runs", runs);
    Reports.json(out.resolve("evaluation.json"), json);
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
              priv.stream().mapToDouble(Evaluation.Setting::accuracyHalfWidth).toArray()));
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
    String title =
        options.dataset
            + ", "
            + options.model
            + ", "
            + options.clients
            + " clients, "
            + options.rounds
            + " rounds";
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
}
