package dev.privagg.cli;

import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.RdpAccountant;
import picocli.CommandLine.Option;

/** The {@code --accountant} and {@code --orders} options shared by epsilon and plan. */
final class AccountantOption {
  @Option(
      names = "--accountant",
      defaultValue = "rdp",
      description =
          "rdp (default), pld (privacy loss distribution), advanced or basic composition.")
  String name;

  @Option(
      names = "--orders",
      paramLabel = "A,B,...",
      description = "RDP orders to search instead of the default 1.1..10.9, 11..63, 128..1024.")
  String orders;

  Accountant build(Flags flags) {
    if (!Accountant.NAMES.contains(name)) {
      throw flags.fail(
          "--accountant must be one of "
              + String.join(", ", Accountant.NAMES)
              + ", was '"
              + name
              + "'");
    }
    if (orders != null) {
      if (!name.equals("rdp")) {
        throw flags.fail("--orders only applies to --accountant rdp, was " + name);
      }
      return RdpAccountant.withOrders(flags.orders("--orders", orders));
    }
    return Accountant.named(name);
  }
}
