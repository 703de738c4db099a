package dev.privagg.privacy;

/**
 * One entry of a privacy ledger: {@code count} applications of a Gaussian mechanism with noise
 * multiplier {@code noiseMultiplier} (std divided by L2 sensitivity) on a Poisson sample taken with
 * rate {@code samplingRate}. A noise multiplier of 0 is allowed and costs infinite epsilon.
 */
public record PrivacyEvent(
    MechanismKind kind, double noiseMultiplier, double samplingRate, long count)
    implements java.io.Serializable {

  /** Validates the event; a {@link MechanismKind#GAUSSIAN} event must have sampling rate 1. */
  public PrivacyEvent {
    if (kind == null) {
      throw new IllegalArgumentException("kind must be set, was null");
    }
    Checks.nonNegativeFinite("noiseMultiplier", noiseMultiplier);
    Checks.samplingRate("samplingRate", samplingRate);
    Checks.atLeastOne("count", count);
    if (kind == MechanismKind.NO_OP && noiseMultiplier != 0) {
      throw new IllegalArgumentException(
          "a NO_OP event has no noise multiplier (0), was " + noiseMultiplier);
    }
    if (kind != MechanismKind.POISSON_SAMPLED_GAUSSIAN && samplingRate != 1) {
      throw new IllegalArgumentException(
          "samplingRate of a "
              + kind
              + " event must be 1, was "
              + samplingRate
              + "; use POISSON_SAMPLED_GAUSSIAN for a sampled round");
    }
  }

  /** {@code count} rounds of the Poisson-subsampled Gaussian; rate 1 means no sampling. */
  public static PrivacyEvent sampledGaussian(
      double noiseMultiplier, double samplingRate, long count) {
    MechanismKind kind =
        samplingRate == 1 ? MechanismKind.GAUSSIAN : MechanismKind.POISSON_SAMPLED_GAUSSIAN;
    return new PrivacyEvent(kind, noiseMultiplier, samplingRate, count);
  }

  /** {@code count} rounds of the Gaussian mechanism without amplification by sampling. */
  public static PrivacyEvent gaussian(double noiseMultiplier, long count) {
    return new PrivacyEvent(MechanismKind.GAUSSIAN, noiseMultiplier, 1.0, count);
  }

  /** {@code count} rounds that cost nothing ({@link MechanismKind#NO_OP}). */
  public static PrivacyEvent noOp(long count) {
    return new PrivacyEvent(MechanismKind.NO_OP, 0, 1.0, count);
  }

  /** The same mechanism repeated {@code times} times as often. */
  public PrivacyEvent times(long times) {
    return new PrivacyEvent(kind, noiseMultiplier, samplingRate, Math.multiplyExact(count, times));
  }
}
