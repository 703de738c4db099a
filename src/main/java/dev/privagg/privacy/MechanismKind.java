package dev.privagg.privacy;

/** The kinds of mechanism a ledger can hold; a ledger naming any other kind is refused. */
public enum MechanismKind {
  /** Gaussian mechanism on the full population (sampling rate 1). */
  GAUSSIAN,
  /** Gaussian mechanism on a Poisson sample taken with probability {@code samplingRate}. */
  POISSON_SAMPLED_GAUSSIAN,
  /**
   * The distributed discrete Gaussian on the full population (KLS21): clients' noise shares under
   * secure aggregation. Its noise multiplier is the Gaussian's whose Renyi DP dominates KLS21's
   * bound ({@link DistributedDiscreteGaussian#dominatingNoiseMultiplier}), so only the Renyi
   * accountant may compose it: no PLD or (epsilon, delta) curve of it is known.
   */
  DISTRIBUTED_DISCRETE_GAUSSIAN,
  /**
   * A round that adds nothing to the worst case over clients (dp_accounting's {@code NoOpDpEvent}):
   * with amplified banded matrix factorization, a round whose group has had no more rounds than
   * group 0 (see {@code dev.privagg.bandmf.AmplifiedBandMf}). Counted as a round, composed as
   * nothing.
   */
  NO_OP;

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
