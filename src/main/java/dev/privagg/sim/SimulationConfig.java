package dev.privagg.sim;

import dev.privagg.client.train.TrainingOptions;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.Checks;
import java.util.List;

/**
 * One federated simulation: dataset and model, clients and their partition, rounds and the server's
 * privacy setting. {@code noiseMultiplier} NaN means: plan it from {@code targetEpsilon} over
 * {@code rounds}; a noise multiplier of 0 is the non-private baseline (infinite budget). See {@link
 * #SAMPLINGS} for {@code sampling}. With {@code adaptiveClipping} (null: C is fixed) {@code
 * clipNorm} is the initial C; {@code serverOptimizer} steps the noisy average (FedAvg, FedAvgM,
 * FedAdam, FedYogi).
 */
public record SimulationConfig(
    String dataset,
    String model,
    int hidden,
    int clients,
    int expectedClients,
    String sampling,
    int rounds,
    String partition,
    double alpha,
    double noiseMultiplier,
    double targetEpsilon,
    double delta,
    double clipNorm,
    AdaptiveClipping adaptiveClipping,
    ServerOptimizer serverOptimizer,
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
    if (!SAMPLINGS.contains(sampling)) {
      throw new IllegalArgumentException(
          "sampling must be one of " + SAMPLINGS + ", was '" + sampling + "'");
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
    if (serverOptimizer == null) {
      throw new IllegalArgumentException("serverOptimizer must be given, was null");
    }
    if (roundTimeoutMillis < 500) {
      throw new IllegalArgumentException(
          "roundTimeoutMillis must be >= 500, was " + roundTimeoutMillis);
    }
  }

  /**
   * The job spec's {@code privacy.adaptiveClipping} (Andrew et al. 2021): the target fraction of
   * unclipped updates, the step of C's geometric update and the std of the noise on the unclipped
   * count ({@code NaN}: the spec's default, expected clients / 20).
   */
  public record AdaptiveClipping(double targetQuantile, double learningRate, double countNoiseStd) {
    public AdaptiveClipping {
      Checks.openUnitInterval("targetQuantile", targetQuantile);
      Checks.positiveFinite("learningRate", learningRate);
      if (!Double.isNaN(countNoiseStd)) {
        Checks.positiveFinite("countNoiseStd", countNoiseStd);
      }
    }
  }

  /**
   * Who samples: {@code server} (every client trains and sends each round, the job keeps each
   * update with the sampling rate: server-poisson) or {@code client} (each client draws its own
   * participation with the sampling rate, only the sampled ones train and send; the spec declares
   * it: declared-client-poisson).
   */
  public static final List<String> SAMPLINGS = List.of("server", "client");

  /** The Poisson sampling rate: expected cohort / clients. */
  public double samplingRate() {
    return (double) expectedClients / clients;
  }

  /** True when clients sample themselves (declared-client-poisson). */
  public boolean clientSampling() {
    return sampling.equals("client");
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
        sampling,
        rounds,
        partition,
        alpha,
        z,
        targetEpsilon,
        delta,
        clipNorm,
        adaptiveClipping,
        serverOptimizer,
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
        sampling,
        rounds,
        partition,
        alpha,
        noiseMultiplier,
        targetEpsilon,
        delta,
        clipNorm,
        adaptiveClipping,
        serverOptimizer,
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
        sampling,
        rounds,
        partition,
        alpha,
        noiseMultiplier,
        targetEpsilon,
        delta,
        clipNorm,
        adaptiveClipping,
        serverOptimizer,
        training,
        roundTimeoutMillis,
        noiseSource,
        seed);
  }

  /** The same simulation with adaptive clipping (null: fixed C) from {@code clipNorm}. */
  public SimulationConfig withAdaptiveClipping(AdaptiveClipping adaptive) {
    return new SimulationConfig(
        dataset,
        model,
        hidden,
        clients,
        expectedClients,
        sampling,
        rounds,
        partition,
        alpha,
        noiseMultiplier,
        targetEpsilon,
        delta,
        clipNorm,
        adaptive,
        serverOptimizer,
        training,
        roundTimeoutMillis,
        noiseSource,
        seed);
  }

  public SimulationConfig withServerOptimizer(ServerOptimizer optimizer) {
    return new SimulationConfig(
        dataset,
        model,
        hidden,
        clients,
        expectedClients,
        sampling,
        rounds,
        partition,
        alpha,
        noiseMultiplier,
        targetEpsilon,
        delta,
        clipNorm,
        adaptiveClipping,
        optimizer,
        training,
        roundTimeoutMillis,
        noiseSource,
        seed);
  }
}
