package dev.privagg.cli;

import dev.privagg.privacy.MechanismKind;
import dev.privagg.privacy.PrivacyEvent;
import picocli.CommandLine.Option;

/**
 * The per-round mechanism: {@code --noise-multiplier}, {@code --sampling-rate} and {@code
 * --mechanism}.
 */
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

  @Option(
      names = "--mechanism",
      defaultValue = "gaussian",
      description =
          "gaussian (default) or distributed-discrete-gaussian: a model's distributed-noise"
              + " charge (its noise multiplier is the dominating Gaussian's), which only the rdp"
              + " accountant composes, at sampling rate 1.")
  String kind;

  /** Validates the flags and returns {@code rounds} rounds of this mechanism. */
  PrivacyEvent rounds(Flags flags, long rounds) {
    flags.nonNegative("--noise-multiplier", noiseMultiplier);
    flags.samplingRate("--sampling-rate", samplingRate);
    return switch (kind) {
      case "gaussian" -> PrivacyEvent.sampledGaussian(noiseMultiplier, samplingRate, rounds);
      case "distributed-discrete-gaussian" -> {
        if (samplingRate != 1) {
          throw flags.fail(
              "--mechanism distributed-discrete-gaussian is charged without amplification: give"
                  + " --sampling-rate 1, was "
                  + samplingRate);
        }
        yield new PrivacyEvent(
            MechanismKind.DISTRIBUTED_DISCRETE_GAUSSIAN, noiseMultiplier, 1.0, rounds);
      }
      default ->
          throw flags.fail(
              "--mechanism must be gaussian or distributed-discrete-gaussian, was '" + kind + "'");
    };
  }
}
