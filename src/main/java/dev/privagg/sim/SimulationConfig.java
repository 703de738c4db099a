package dev.privagg.sim;

import dev.privagg.client.train.TrainingOptions;
import dev.privagg.privacy.Checks;

/**
 * One federated simulation: dataset and model, clients and their partition, rounds and the server's
 * privacy setting. {@code noiseMultiplier} NaN means: plan it from {@code targetEpsilon} over
 * {@code rounds}; a noise multiplier of 0 is the non-private baseline (infinite budget).
 */
public record SimulationConfig(
    String dataset,
    String model,
    int hidden,
    int clients,
    int expectedClients,
    int rounds,
    String partition,
    double alpha,
    double noiseMultiplier,
    double targetEpsilon,
    double delta,
    double clipNorm,
    double serverLearningRate,
    TrainingOptions training,
    long roundTimeoutMillis,
    String noiseSource,
    long seed) {

  public SimulationConfig {
    Checks.atLeastOne("clients", clients);
    Checks.atLeastOne("expectedClients", expectedClients);
    if (expectedClients > clients) {
      throw new IllegalArgumentException(
          "expectedClients must be <= clients (" + clients + "), was " + expectedClients);
    }
    Checks.atLeastOne("rounds", rounds);
    if (!partition.equals("iid") && !partition.equals("dirichlet")) {
      throw new IllegalArgumentException(
          "partition must be iid or dirichlet, was '" + partition + "'");
    }
    if (Double.isNaN(noiseMultiplier)) {
      Checks.positiveFinite("targetEpsilon", targetEpsilon);
    } else {
      Checks.nonNegativeFinite("noiseMultiplier", noiseMultiplier);
    }
    Checks.openUnitInterval("delta", delta);
    Checks.positiveFinite("clipNorm", clipNorm);
    if (roundTimeoutMillis < 500) {
      throw new IllegalArgumentException(
          "roundTimeoutMillis must be >= 500, was " + roundTimeoutMillis);
    }
  }

  /** The Poisson sampling rate the server applies: expected cohort / clients. */
  public double samplingRate() {
    return (double) expectedClients / clients;
  }

  /** The same simulation without privacy: noise 0, infinite budget, through the same pipeline. */
  public SimulationConfig nonPrivate() {
    return withNoise(0.0);
  }

  public SimulationConfig withNoise(double z) {
    return new SimulationConfig(
        dataset,
        model,
        hidden,
        clients,
        expectedClients,
        rounds,
        partition,
        alpha,
        z,
        targetEpsilon,
        delta,
        clipNorm,
        serverLearningRate,
        training,
        roundTimeoutMillis,
        noiseSource,
        seed);
  }

  public SimulationConfig withSeed(long newSeed) {
    return new SimulationConfig(
        dataset,
        model,
        hidden,
        clients,
        expectedClients,
        rounds,
        partition,
        alpha,
        noiseMultiplier,
        targetEpsilon,
        delta,
        clipNorm,
        serverLearningRate,
        training,
        roundTimeoutMillis,
        noiseSource,
        newSeed);
  }

  public SimulationConfig withCohort(int m) {
    return new SimulationConfig(
        dataset,
        model,
        hidden,
        clients,
        m,
        rounds,
        partition,
        alpha,
        noiseMultiplier,
        targetEpsilon,
        delta,
        clipNorm,
        serverLearningRate,
        training,
        roundTimeoutMillis,
        noiseSource,
        seed);
  }
}
