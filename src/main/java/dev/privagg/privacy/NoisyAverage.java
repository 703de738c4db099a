package dev.privagg.privacy;

/**
 * The server step of DP-FedAvg (McMahan et al. 2018, Algorithm 1): add Gaussian noise to the sum of
 * clipped updates, divide by the expected cohort size m, and move the model by the server learning
 * rate times that average.
 *
 * <p>The denominator is the data-independent m from the job spec (DESIGN invariant 3), never the
 * number of updates received: that count is sensitive, and dividing by it would change the
 * sensitivity analysis. An empty round still adds noise and moves the model by noise / m.
 */
public final class NoisyAverage {
  private NoisyAverage() {}

  /**
   * Updates {@code model} in place: model += lr * (sum + N(0, sigma^2 I)) / m.
   *
   * @param sum the clipped sum, one value per coordinate; noise is added to it in place
   */
  public static void apply(
      float[] model,
      double[] sum,
      GaussianMechanism mechanism,
      NoiseStream noise,
      int expectedClients,
      double serverLearningRate) {
    if (model.length != sum.length) {
      throw new IllegalArgumentException(
          "model has " + model.length + " coordinates, the sum " + sum.length);
    }
    Checks.atLeastOne("expectedClients", expectedClients);
    Checks.positiveFinite("serverLearningRate", serverLearningRate);
    mechanism.addNoise(sum, noise);
    step(model, sum, expectedClients, serverLearningRate);
  }

  /**
   * Updates {@code model} in place with noise drawn before the round closed: model += lr * (sum +
   * noise) / m. With {@code noise} from {@link GaussianMechanism#noise} on the same stream this is
   * bit for bit {@link #apply(float[], double[], GaussianMechanism, NoiseStream, int, double)}.
   *
   * @param sum the clipped sum, one value per coordinate; the noise is added to it in place
   */
  public static void applyDrawn(
      float[] model, double[] sum, double[] noise, int expectedClients, double serverLearningRate) {
    if (model.length != sum.length || noise.length != sum.length) {
      throw new IllegalArgumentException(
          "model, sum and noise must have one length, were "
              + model.length
              + ", "
              + sum.length
              + " and "
              + noise.length);
    }
    for (int i = 0; i < sum.length; i++) {
      sum[i] += noise[i];
    }
    step(model, sum, expectedClients, serverLearningRate);
  }

  private static void step(
      float[] model, double[] noisySum, int expectedClients, double serverLearningRate) {
    Checks.atLeastOne("expectedClients", expectedClients);
    Checks.positiveFinite("serverLearningRate", serverLearningRate);
    double step = serverLearningRate / expectedClients;
    for (int i = 0; i < model.length; i++) {
      model[i] = (float) (model[i] + step * noisySum[i]);
    }
  }
}
