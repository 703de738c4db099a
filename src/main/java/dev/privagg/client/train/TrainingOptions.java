package dev.privagg.client.train;

import dev.privagg.privacy.Checks;
import dev.privagg.privacy.PrivateTopK;

/**
 * How a client trains locally on the announced base model.
 *
 * @param dpSgd sample-level DP-SGD (Abadi et al. 2016), or null. Guarantees (epsilon, delta)-DP for
 *     each of the client's own examples, per round, as the local RDP accountant reports; it does
 *     not protect the client as a whole (client-level DP is the server's job).
 * @param localNoise Gaussian noise on the clipped update before sending (local DP), or null.
 *     Guarantees (epsilon, delta)-DP for the client's whole dataset in each round even against the
 *     server, at a large cost in accuracy; rounds compose, so the client spends it per round.
 * @param privateTopK pure epsilon-local DP sparsification of the update ({@link PrivateTopK}: k
 *     coordinates chosen by the exponential mechanism, their values Laplace-noised), or null. Its
 *     epsilon covers the whole release, per round; rounds compose.
 * @param sparsifyFraction share of largest-magnitude coordinates kept (Shokri and Shmatikov 2015),
 *     1 = all. Gives no formal DP guarantee; it only reduces what is shared.
 */
public record TrainingOptions(
    int epochs,
    int batchSize,
    double learningRate,
    DpSgd dpSgd,
    LocalNoise localNoise,
    PrivateTopK privateTopK,
    double sparsifyFraction) {

  /** Per-example clipping to {@code clipNorm} and noise std {@code noiseMultiplier * clipNorm}. */
  public record DpSgd(double clipNorm, double noiseMultiplier, double delta) {
    public DpSgd {
      Checks.positiveFinite("dpSgd.clipNorm", clipNorm);
      Checks.positiveFinite("dpSgd.noiseMultiplier", noiseMultiplier);
      Checks.openUnitInterval("dpSgd.delta", delta);
    }
  }

  /** The update clipped to {@code clipNorm}, then analytic Gaussian noise for (epsilon, delta). */
  public record LocalNoise(double epsilon, double delta, double clipNorm) {
    public LocalNoise {
      Checks.positiveFinite("localNoise.epsilon", epsilon);
      Checks.openUnitInterval("localNoise.delta", delta);
      Checks.positiveFinite("localNoise.clipNorm", clipNorm);
    }
  }

  /** Validates the options. */
  public TrainingOptions {
    Checks.atLeastOne("epochs", epochs);
    Checks.atLeastOne("batchSize", batchSize);
    Checks.positiveFinite("learningRate", learningRate);
    if (!(sparsifyFraction > 0 && sparsifyFraction <= 1)) {
      throw new IllegalArgumentException(
          "sparsifyFraction must be in (0, 1], was " + sparsifyFraction);
    }
  }

  /** Plain minibatch SGD. */
  public static TrainingOptions sgd(int epochs, int batchSize, double learningRate) {
    return new TrainingOptions(epochs, batchSize, learningRate, null, null, null, 1.0);
  }
}
