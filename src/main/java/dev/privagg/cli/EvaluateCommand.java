package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code privagg evaluate}: privacy/utility sweep with CSV, JSON and PNG plots, or with {@code
 * --variants} a comparison at one target epsilon. Each mode's flags and work are its own class
 * ({@link EvaluateSweep}, {@link EvaluateComparison}); this one holds what they share.
 */
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
      "and writes comparison.csv, comparison.json and comparison.png.",
      "With --mechanisms it compares noise mechanisms at one --target-epsilon: BLT-correlated",
      "noise and independent noise for check-in clients, and amplified DP-FedAvg.",
      "With --distributed-bits it compares distributed noise at those word sizes with central",
      "noise at one --target-epsilon, every client in every round, run in memory."
    })
final class EvaluateCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @Mixin SimulationOptions options;

  @Mixin EvaluateSweep sweep;

  @Mixin EvaluateComparison comparison;

  @Mixin EvaluateMechanisms mechanisms;

  @Mixin EvaluateDistributed distributed;

  @Option(names = "--seeds", defaultValue = "3", description = "Seeds per setting (default 3).")
  int seeds;

  @Option(
      names = "--out",
      defaultValue = "evaluation-output",
      description = "Output folder (default evaluation-output).")
  Path out;

  @Mixin SimulationBrokerOptions broker;

  @Mixin JsonOption json;

  /** What both modes take from the command: its flags, the simulation, seeds and outputs. */
  record Shared(
      Flags flags,
      SimulationOptions options,
      int seeds,
      Path outputFolder,
      SimulationBrokerOptions broker,
      PrintWriter console,
      boolean json) {}

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    flags.atLeastOne("--seeds", seeds);
    // A comparison ignores the sweep's numbers, but refuses a bad one all the same.
    sweep.checkNumbers(flags);
    Shared shared =
        new Shared(flags, options, seeds, out, broker, spec.commandLine().getOut(), json.enabled);
    if (!distributed.requested() && flags.given("--dropout-rate")) {
      throw flags.fail("--dropout-rate belongs to --distributed-bits: add it, or drop the rate");
    }
    if (!mechanisms.requested() && flags.given("--bands")) {
      throw flags.fail("--bands fixes bandmf's band count: add --mechanisms with bandmf");
    }
    if (distributed.requested()) {
      return distributed.run(shared, comparison.targetEpsilon(flags));
    }
    if (mechanisms.requested()) {
      return mechanisms.run(shared, comparison.targetEpsilon(flags));
    }
    if (comparison.requested()) {
      return comparison.run(shared);
    }
    comparison.refuseTargetWithoutVariants(flags);
    return sweep.run(shared);
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
