package dev.privagg.cli;

import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.BudgetStatus;
import dev.privagg.privacy.MechanismKind;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code privagg budget-calc}: a calculator of the budget spent and remaining after a number of
 * identical rounds, under each accountant side by side. {@code privagg status} reads a running job.
 */
@Command(
    name = "budget-calc",
    mixinStandardHelpOptions = true,
    description = {
      "Calculator: budget spent and remaining after R identical rounds, and how many more fit.",
      "Shown under RDP, PLD and basic and advanced composition, with how much looser than RDP each is."
    })
final class BudgetCalcCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin MechanismOptions mechanism;

  @Option(names = "--rounds-done", required = true, description = "Rounds already released (>= 0).")
  long roundsDone;

  @Option(
      names = "--budget-epsilon",
      required = true,
      description = "Epsilon budget (> 0, may be Infinity).")
  double budgetEpsilon;

  @Option(names = "--delta", required = true, description = "Delta in (0, 1).")
  double delta;

  @Mixin JsonOption json;

  @Override
  public Integer call() {
    Flags flags = new Flags(spec);
    PrivacyEvent round = mechanism.rounds(flags, 1);
    if (roundsDone < 0) {
      throw flags.fail("--rounds-done must be >= 0, was " + roundsDone);
    }
    if (!(budgetEpsilon > 0)) {
      throw flags.fail("--budget-epsilon must be > 0 (Infinity allowed), was " + budgetEpsilon);
    }
    flags.delta("--delta", delta);

    PrivacyLedger ledger =
        roundsDone == 0 ? PrivacyLedger.EMPTY : PrivacyLedger.of(round.times(roundsDone));
    List<Map<String, Object>> rows = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    text.append(
        String.format(
            "%-9s %12s %12s %16s %14s%n",
            "accountant", "spent", "remaining", "rounds that fit", "vs rdp"));
    double rdpSpent = Double.NaN;
    // Distributed-noise rounds are known only as a Renyi bound: the other accountants refuse them.
    List<String> accountants =
        round.kind() == MechanismKind.DISTRIBUTED_DISCRETE_GAUSSIAN
            ? List.of("rdp")
            : Accountant.NAMES;
    for (String name : accountants) {
      BudgetStatus status =
          BudgetStatus.of(Accountant.named(name), ledger, budgetEpsilon, delta, round);
      if (name.equals("rdp")) {
        rdpSpent = status.epsilonSpent();
      }
      double looser = status.epsilonSpent() / rdpSpent;
      rows.add(
          Output.fields(
              "accountant", name,
              "epsilonSpent", Output.number(status.epsilonSpent()),
              "epsilonRemaining", Output.number(status.epsilonRemaining()),
              "roundsRemaining", status.roundsRemaining(),
              "looserThanRdp", Output.number(looser)));
      text.append(
          String.format(
              "%-9s %12s %12s %16s %14s%n",
              name,
              Text.number(status.epsilonSpent()),
              Text.number(status.epsilonRemaining()),
              status.roundsRemaining() == Long.MAX_VALUE
                  ? "unbounded"
                  : Long.toString(status.roundsRemaining()),
              Double.isFinite(looser) ? Text.number(looser) + "x" : "-"));
    }
    Output.print(
        spec.commandLine().getOut(),
        json.enabled,
        Output.fields(
            "budgetEpsilon", Output.number(budgetEpsilon),
            "delta", delta,
            "roundsDone", roundsDone,
            "accountants", rows),
        text.toString().stripTrailing());
    return 0;
  }
}
