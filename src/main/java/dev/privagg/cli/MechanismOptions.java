package dev.privagg.cli;

import dev.privagg.privacy.PrivacyEvent;
import picocli.CommandLine.Option;

/** The per-round mechanism: {@code --noise-multiplier} and {@code --sampling-rate}. */
final class MechanismOptions {
  @Option(
      names = "--noise-multiplier",
      required = true,
      description = "Noise std / clip norm (>= 0).")
  double noiseMultiplier;

  @Option(
      names = "--sampling-rate",
      required = true,
      description = "Poisson sampling rate q in (0, 1].")
  double samplingRate;

  /** Validates both flags and returns {@code rounds} rounds of this mechanism. */
  PrivacyEvent rounds(Flags flags, long rounds) {
    flags.nonNegative("--noise-multiplier", noiseMultiplier);
    flags.samplingRate("--sampling-rate", samplingRate);
    return PrivacyEvent.sampledGaussian(noiseMultiplier, samplingRate, rounds);
  }
}
