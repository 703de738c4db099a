package dev.privagg.cli;

import dev.privagg.sim.CentralBaseline;
import dev.privagg.sim.Evaluation;
import dev.privagg.sim.EvaluationReport;
import dev.privagg.sim.SimulationConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code evaluate} without {@code --variants}: every cohort size and noise multiplier, and the
 * non-private baseline, several seeds each through the real pipeline; with {@code --central} also
 * the model trained centrally. Its flags, and the sweep they describe.
 */
final class EvaluateSweep {
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

  /** The flags of the central baseline and the noise multipliers, each in its range. */
  void checkNumbers(Flags flags) {
    flags.atLeastOne("--central-epochs", centralEpochs);
    flags.atLeastOne("--central-batch-size", centralBatchSize);
    flags.positive("--central-lr", centralLr);
    for (double z : noiseMultipliers) {
      flags.positive("--noise-multipliers", z);
    }
  }

  /** Runs the sweep, writes its files and prints its table (or JSON summary). */
  int run(EvaluateCommand.Shared shared) throws Exception {
    List<Integer> sweptCohorts = cohorts == null ? List.of(shared.options().cohort) : cohorts;
    SimulationConfig base =
        shared.options().config(shared.flags(), noiseMultipliers.get(0), Double.NaN);
    int runs = sweptCohorts.size() * (noiseMultipliers.size() + 1) * shared.seeds();
    PrintWriter out = shared.console();
    if (!shared.json()) {
      printStart(out, base, runs);
    }
    EvaluationConsole console = new EvaluationConsole(out, shared.json(), runs);
    CentralBaseline baseline = central ? trainCentral(base, shared.seeds(), console) : null;
    List<Evaluation.Run> results =
        shared
            .broker()
            .run(
                kafka ->
                    Evaluation.sweep(
                        base,
                        sweptCohorts,
                        noiseMultipliers,
                        shared.seeds(),
                        kafka,
                        console::round,
                        console::run));
    List<Evaluation.Setting> settings = Evaluation.summarise(results);
    EvaluationReport.sweep(base, settings, results, baseline).writeTo(shared.outputFolder());
    if (shared.json()) {
      Output.line(out, summaryFields(base, settings, baseline, shared.outputFolder()));
    } else {
      printTable(out, settings, baseline);
      console.closing(settings, shared.outputFolder());
    }
    return 0;
  }

  private static void printStart(PrintWriter out, SimulationConfig base, int runs) {
    out.printf(
        "evaluating %d runs of %d rounds (%s, %s, %d clients, %s sampling)%n",
        runs, base.rounds(), base.dataset(), base.model(), base.clients(), base.sampling());
    out.flush();
  }

  /** The central baseline, trained before the broker starts (it needs none). */
  private CentralBaseline trainCentral(
      SimulationConfig base, int seeds, EvaluationConsole console) {
    return CentralBaseline.train(
        base, seeds, centralEpochs, centralBatchSize, centralLr, console::centralEpoch);
  }

  /** Each setting's epsilon, accuracy and attack AUC, then the central baseline's accuracy. */
  private static void printTable(
      PrintWriter out, List<Evaluation.Setting> settings, CentralBaseline baseline) {
    out.println();
    out.printf(
        "%-6s %-8s %-10s %-32s %-18s %s%n",
        "cohort", "z", "epsilon", "accuracy (95% CI)", "MIA AUC (95% CI)", "epsilon-hat");
    for (Evaluation.Setting s : settings) {
      out.printf(
          "%-6d %-8s %-10s %.4f [%.4f, %.4f]         %.3f +- %.3f     %s%n",
          s.cohort(),
          Text.number(s.noiseMultiplier()),
          Text.number(s.epsilon()),
          s.accuracy(),
          s.accuracyLow(),
          s.accuracyHigh(),
          s.auc(),
          s.aucHalfWidth(),
          EvaluationConsole.epsilonHat(s));
    }
    if (baseline != null) {
      Evaluation.Interval accuracy = baseline.accuracy();
      out.printf(
          "central (pooled data, %d epochs): accuracy %.4f [%.4f, %.4f]%n",
          baseline.epochs(), accuracy.mean(), accuracy.low(), accuracy.high());
    }
  }

  /** The final JSON line: each setting's summary over seeds, the central baseline, the outputs. */
  private static Map<String, Object> summaryFields(
      SimulationConfig base,
      List<Evaluation.Setting> settings,
      CentralBaseline baseline,
      Path outputFolder) {
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
              "membershipAucCi95", Output.number(s.aucHalfWidth()),
              "epsilonHat", Output.number(s.epsilonHat()),
              "oneRunFdpEpsilon", Output.number(s.oneRunFdpEpsilon())));
    }
    return Output.fields(
        "type", "summary",
        "dataset", base.dataset(),
        "model", base.model(),
        "clients", base.clients(),
        "sampling", base.sampling(),
        "rounds", base.rounds(),
        "delta", base.delta(),
        "settings", rows,
        "central", baseline == null ? null : centralFields(baseline),
        "outputs", outputFolder.toAbsolutePath().toString());
  }

  private static Map<String, Object> centralFields(CentralBaseline baseline) {
    Evaluation.Interval accuracy = baseline.accuracy();
    return Output.fields(
        "epochs", baseline.epochs(),
        "seeds", baseline.runs().size(),
        "accuracy", Output.number(accuracy.mean()),
        "accuracyCi95Low", Output.number(accuracy.low()),
        "accuracyCi95High", Output.number(accuracy.high()),
        "accuracyInterval", accuracy.kind());
  }
}
