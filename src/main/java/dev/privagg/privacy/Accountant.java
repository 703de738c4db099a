package dev.privagg.privacy;

/**
 * Turns a privacy ledger into an (epsilon, delta) guarantee. Implementations are pure functions of
 * the ledger and their own immutable parameters.
 */
public interface Accountant {
  /**
   * Name used in ledgers, job specs and the CLI: {@code rdp}, {@code pld}, {@code advanced}, {@code
   * basic}.
   */
  String name();

  /** The smallest epsilon this accountant can prove for {@code ledger} at {@code delta}. */
  PrivacySpent epsilon(PrivacyLedger ledger, double delta);

  /** The smallest delta this accountant can prove for {@code ledger} at {@code epsilon}. */
  double delta(PrivacyLedger ledger, double epsilon);

  /** The names {@link #named} knows, tightest first: specs and the CLI accept exactly these. */
  java.util.List<String> NAMES = java.util.List.of("rdp", "pld", "advanced", "basic");

  /** The accountant with the given name and default parameters. */
  static Accountant named(String name) {
    return switch (name) {
      case "rdp" -> RdpAccountant.withDefaultOrders();
      case "pld" -> PldAccountant.withDefaultInterval();
      case "advanced" -> new AdvancedCompositionAccountant();
      case "basic" -> new BasicCompositionAccountant();
      default ->
          throw new IllegalArgumentException(
              "accountant must be one of " + String.join(", ", NAMES) + ", was '" + name + "'");
    };
  }
}
