package dev.privagg.cli;

import dev.privagg.sim.Evaluation;
import dev.privagg.sim.EvaluationReport;
import dev.privagg.sim.SimulationConfig;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code evaluate --variants}: fixed or adaptive clipping and server optimizers compared at one
 * target epsilon, several seeds each, every variant with the noise multiplier its job spec plans.
 * Its flags, and the comparison they describe.
 */
final class EvaluateComparison {
  /** The default quantile of adaptive variants when --adaptive-clipping does not give one. */
  private static final double ADAPTIVE_QUANTILE = 0.5;

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
          "With --variants or --mechanisms: the epsilon every variant spends over --rounds; each"
              + " variant's job spec plans its noise multiplier (default 4).")
  Double targetEpsilon;

  /** The checked --target-epsilon, 4 when not given. */
  double targetEpsilon(Flags flags) {
    return flags.positive("--target-epsilon", targetEpsilon == null ? 4.0 : targetEpsilon);
  }

  /** True when the command line asks for a comparison. */
  boolean requested() {
    return variants != null;
  }

  /** --target-epsilon belongs to a comparison: refused in a noise sweep. */
  void refuseTargetWithoutVariants(Flags flags) {
    if (targetEpsilon != null) {
      throw flags.fail(
          "--target-epsilon sets the epsilon of a comparison: add --variants, --mechanisms or --distributed-bits, or sweep noise"
              + " multipliers with --noise-multipliers");
    }
  }

  /**
   * Checks the flags, plans every variant, runs them all, writes the files and prints the table (or
   * JSON summary).
   */
  int run(EvaluateCommand.Shared shared) throws Exception {
    Flags flags = shared.flags();
    refuseSweepFlags(flags);
    refuseServerFlagsOfOneOptimizer(flags);
    double epsilon = targetEpsilon(flags);
    SimulationConfig base =
        shared.options().config(flags, Double.NaN, epsilon, defaultAdaptiveQuantile());
    List<Evaluation.Variant> parsed = parseVariants(flags, base, shared.options());
    // Every variant's spec is planned before the broker starts: an unreachable target fails now.
    List<JobSpec> specs = Evaluation.plan(base, parsed);
    List<Evaluation.Variant> planned = resolved(parsed, specs);
    int runs = planned.size() * shared.seeds();
    PrintWriter out = shared.console();
    if (!shared.json()) {
      printPlan(out, base, planned, specs, shared.seeds());
    }
    EvaluationConsole console = new EvaluationConsole(out, shared.json(), runs);
    List<Evaluation.Run> results =
        shared
            .broker()
            .run(
                kafka ->
                    Evaluation.compare(
                        base, planned, shared.seeds(), kafka, console::round, console::run));
    List<Evaluation.Setting> settings = Evaluation.summarise(results);
    EvaluationReport.comparison(base, planned, settings, results).writeTo(shared.outputFolder());
    Map<String, Evaluation.Variant> byName = Evaluation.Variant.byName(planned);
    if (shared.json()) {
      Output.line(out, summaryFields(base, byName, settings, shared.outputFolder()));
    } else {
      printTable(out, byName, settings);
      console.closing(settings, shared.outputFolder());
    }
    return 0;
  }

  /**
   * The quantile of adaptive variants when --adaptive-clipping gives none; null when no variant is
   * adaptive, so that --clip-lr and --clip-count-noise are refused.
   */
  private Double defaultAdaptiveQuantile() {
    return variants.stream().anyMatch(t -> t.trim().startsWith("adaptive"))
        ? ADAPTIVE_QUANTILE
        : null;
  }

  /**
   * The variants as their specs resolved them, so the outputs state the count noise they ran with
   * (m / 20 unless given), not "default".
   */
  private static List<Evaluation.Variant> resolved(
      List<Evaluation.Variant> variants, List<JobSpec> specs) {
    List<Evaluation.Variant> resolved = new ArrayList<>();
    for (int i = 0; i < variants.size(); i++) {
      resolved.add(variants.get(i).resolvedBy(specs.get(i)));
    }
    return resolved;
  }

  /** The noise sweep's flags, which mean nothing at one target epsilon and cohort. */
  private static void refuseSweepFlags(Flags flags) {
    for (String sweepOnly : List.of("--noise-multipliers", "--cohorts", "--central")) {
      if (flags.given(sweepOnly)) {
        throw flags.fail(
            sweepOnly
                + " belongs to the noise sweep; --variants compares at one --target-epsilon and"
                + " --cohort: drop one of them");
      }
    }
  }

  /** The server flags that pick one optimizer; each variant names its own. */
  private static void refuseServerFlagsOfOneOptimizer(Flags flags) {
    for (String perVariant : List.of("--server-optimizer", "--server-lr")) {
      if (flags.given(perVariant)) {
        throw flags.fail(
            perVariant
                + ": with --variants each variant names its optimizer and server learning rate,"
                + " e.g. fixed-adam:0.03; drop "
                + perVariant);
      }
    }
  }

  /** The variants of --variants, each named once, with {@code base}'s adaptive clipping. */
  private List<Evaluation.Variant> parseVariants(
      Flags flags, SimulationConfig base, SimulationOptions options) {
    List<Evaluation.Variant> parsed = new ArrayList<>();
    for (String text : variants) {
      Evaluation.Variant v;
      try {
        v =
            Evaluation.Variant.parse(
                text,
                base.adaptiveClipping(),
                (kind, lr) -> options.serverOptimizer(flags, kind, lr));
      } catch (IllegalArgumentException e) {
        throw flags.fail("--variants: " + e.getMessage());
      }
      if (parsed.stream().anyMatch(p -> p.name().equals(v.name()))) {
        throw flags.fail("--variants names " + v.name() + " twice; give each variant once");
      }
      parsed.add(v);
    }
    return parsed;
  }

  /** What will run: the setup, then each variant's planned z, C and server optimizer. */
  private static void printPlan(
      PrintWriter out,
      SimulationConfig base,
      List<Evaluation.Variant> variants,
      List<JobSpec> specs,
      int seeds) {
    out.printf(
        "comparing %d variants at epsilon %s over %d rounds, %d seed%s each (%s, %s, %d"
            + " clients, m = %d, %s sampling)%n",
        variants.size(),
        Text.number(base.targetEpsilon()),
        base.rounds(),
        seeds,
        seeds == 1 ? "" : "s",
        base.dataset(),
        base.model(),
        base.clients(),
        base.expectedClients(),
        base.sampling());
    for (int i = 0; i < specs.size(); i++) {
      JobSpec.Privacy p = specs.get(i).privacy();
      out.printf(
          "  %-20s z %.4f, C %s%s, server %s%n",
          variants.get(i).name(),
          p.noiseMultiplier(),
          Text.number(p.clipNorm()),
          p.adaptiveClipping() == null
              ? " fixed"
              : " initial, adaptive to quantile "
                  + Text.number(p.adaptiveClipping().targetQuantile())
                  + " (count noise std "
                  + Text.number(p.adaptiveClipping().countNoiseStd())
                  + ")",
          specs.get(i).serverOptimizer().kind().specName()
              + " lr "
              + Text.number(specs.get(i).serverOptimizer().learningRate()));
    }
    out.flush();
  }

  /** Each variant's server learning rate, z, epsilon, final C, accuracy and attack AUC. */
  private static void printTable(
      PrintWriter out,
      Map<String, Evaluation.Variant> variants,
      List<Evaluation.Setting> settings) {
    out.println();
    out.printf(
        "%-20s %-10s %-8s %-9s %-9s %-28s %-18s %s%n",
        "variant",
        "server lr",
        "z",
        "epsilon",
        "final C",
        "accuracy (95% CI)",
        "MIA AUC (95% CI)",
        "epsilon-hat");
    for (Evaluation.Setting s : settings) {
      out.printf(
          "%-20s %-10s %-8s %-9s %-9s %.4f [%.4f, %.4f]     %.3f +- %.3f     %s%n",
          s.variant(),
          Text.number(variants.get(s.variant()).optimizer().learningRate()),
          String.format("%.4f", s.noiseMultiplier()),
          String.format("%.3f", s.epsilon()),
          Text.number(s.finalClipNorm()),
          s.accuracy(),
          s.accuracyLow(),
          s.accuracyHigh(),
          s.auc(),
          s.aucHalfWidth(),
          EvaluationConsole.epsilonHat(s));
    }
  }

  /** The final JSON line: each variant's summary over seeds, the setup and the outputs. */
  private static Map<String, Object> summaryFields(
      SimulationConfig base,
      Map<String, Evaluation.Variant> variants,
      List<Evaluation.Setting> settings,
      Path outputFolder) {
    List<Object> rows = new ArrayList<>();
    for (Evaluation.Setting s : settings) {
      Evaluation.Variant v = variants.get(s.variant());
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
              "epsilonHat", Output.number(s.epsilonHat()),
              "oneRunFdpEpsilon", Output.number(s.oneRunFdpEpsilon()),
              "finalClipNorm", Output.number(s.finalClipNorm())));
    }
    return Output.fields(
        "type", "summary",
        "dataset", base.dataset(),
        "model", base.model(),
        "clients", base.clients(),
        "expectedClients", base.expectedClients(),
        "sampling", base.sampling(),
        "rounds", base.rounds(),
        "targetEpsilon", base.targetEpsilon(),
        "delta", base.delta(),
        "variants", rows,
        "outputs", outputFolder.toAbsolutePath().toString());
  }
}
