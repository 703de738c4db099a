package dev.privagg.privacy;

/** The kinds of mechanism a ledger can hold; a ledger naming any other kind is refused. */
public enum MechanismKind {
  /** Gaussian mechanism on the full population (sampling rate 1). */
  GAUSSIAN,
  /** Gaussian mechanism on a Poisson sample taken with probability {@code samplingRate}. */
  POISSON_SAMPLED_GAUSSIAN;

  /** Parses a stored kind name, refusing unknown ones with the list of known kinds. */
  public static MechanismKind parse(String name) {
    for (MechanismKind kind : values()) {
      if (kind.name().equals(name)) {
        return kind;
      }
    }
    throw new IllegalArgumentException(
        "unknown mechanism kind '" + name + "'; known kinds: " + java.util.List.of(values()));
  }
}
