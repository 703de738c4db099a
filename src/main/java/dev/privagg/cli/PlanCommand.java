package dev.privagg.cli;

import dev.privagg.privacy.NoisePlanner;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg plan}: the smallest noise multiplier that fits a target epsilon. */
@Command(
    name = "plan",
    mixinStandardHelpOptions = true,
    description = {
      "Smallest noise multiplier that keeps T rounds within a target epsilon.",
      "Rounds are Poisson-sampled at rate q; the result's epsilon is always <= the target."
    })
final class PlanCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--target-epsilon", required = true, description = "Epsilon budget (> 0).")
  double targetEpsilon;

  @Option(names = "--delta", required = true, description = "Target delta in (0, 1).")
  double delta;

  @Option(names = "--rounds", required = true, description = "Planned rounds T (>= 1).")
  long rounds;

  @Option(
      names = "--sampling-rate",
      required = true,
      description = "Poisson sampling rate q in (0, 1].")
  double samplingRate;

  @Mixin AccountantOption accountant;

  @Mixin JsonOption json;

  @Override
  public Integer call() {
    Flags flags = new Flags(spec);
    flags.positive("--target-epsilon", targetEpsilon);
    flags.delta("--delta", delta);
    flags.atLeastOne("--rounds", rounds);
    flags.samplingRate("--sampling-rate", samplingRate);
    NoisePlanner.Plan plan =
        new NoisePlanner(accountant.build(flags)).plan(targetEpsilon, delta, rounds, samplingRate);
    String text =
        String.format(
            "noise multiplier %s (epsilon %s <= %s at delta %s over %d rounds, q %s, accountant %s)",
            Text.number(plan.noiseMultiplier()),
            Text.number(plan.spent().epsilon()),
            Text.number(targetEpsilon),
            Text.number(delta),
            rounds,
            Text.number(samplingRate),
            accountant.name);
    Output.print(
        spec.commandLine().getOut(),
        json.enabled,
        Output.fields("noiseMultiplier", plan.noiseMultiplier()),
        text);
    return 0;
  }
}
