package dev.privagg.cli;

import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.privacy.PrivacySpent;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg epsilon}: epsilon spent by T rounds of the sampled Gaussian. */
@Command(
    name = "epsilon",
    mixinStandardHelpOptions = true,
    description = "Epsilon spent by T rounds of the Poisson-sampled Gaussian mechanism.")
final class EpsilonCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin MechanismOptions mechanism;

  @Option(names = "--rounds", required = true, description = "Number of rounds T (>= 1).")
  long rounds;

  @Option(names = "--delta", required = true, description = "Target delta in (0, 1).")
  double delta;

  @Mixin AccountantOption accountant;

  @Mixin JsonOption json;

  @Override
  public Integer call() {
    Flags flags = new Flags(spec);
    PrivacyEvent event = mechanism.rounds(flags, flags.atLeastOne("--rounds", rounds));
    flags.delta("--delta", delta);
    Accountant acc = accountant.build(flags);
    PrivacyLedger ledger = PrivacyLedger.of(event);
    PrivacySpent spent;
    try {
      spent = acc.epsilon(ledger, delta);
    } catch (IllegalArgumentException e) {
      throw flags.fail("--accountant " + acc.name() + ": " + e.getMessage());
    }
    String text =
        String.format(
            "epsilon %s at delta %s after %d rounds (accountant %s%s)",
            Text.number(spent.epsilon()),
            Text.number(delta),
            rounds,
            acc.name(),
            // An infinite epsilon (no noise) has no best order to speak of.
            spent.hasOrder() && Double.isFinite(spent.epsilon())
                ? ", best order " + Text.number(spent.order())
                : "");
    Output.print(
        spec.commandLine().getOut(),
        json.enabled,
        Output.fields(
            "epsilon", Output.number(spent.epsilon()), "order", Output.number(spent.order())),
        text);
    return 0;
  }
}
