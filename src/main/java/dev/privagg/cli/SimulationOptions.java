package dev.privagg.cli;

import dev.privagg.client.train.TrainingOptions;
import dev.privagg.sim.SimulationConfig;
import picocli.CommandLine.Option;

/** Options shared by {@code simulate} and {@code evaluate}: data, model, clients, training. */
final class SimulationOptions {
  @Option(
      names = "--dataset",
      defaultValue = "digits",
      description = "digits, breast-cancer or fashion-mnist (default digits).")
  String dataset;

  @Option(
      names = "--model",
      defaultValue = "softmax",
      description = "softmax or mlp (default softmax).")
  String model;

  @Option(
      names = "--hidden",
      defaultValue = "32",
      description = "Hidden units of the MLP (default 32).")
  int hidden;

  @Option(
      names = "--clients",
      defaultValue = "100",
      description = "Simulated clients (default 100).")
  int clients;

  @Option(
      names = "--cohort",
      defaultValue = "20",
      description =
          "Expected clients per round m, the average's denominator; each update is sampled with rate"
              + " m/clients (default 20).")
  int cohort;

  @Option(
      names = "--sampling",
      defaultValue = "server",
      description =
          "server: every client trains and sends each round and the job keeps each update with"
              + " rate m/clients (server-poisson). client: each client draws its own participation"
              + " with rate m/clients, only sampled clients train and send, and the spec declares it"
              + " (declared-client-poisson, charged at that rate): rounds cost the cohort, not the"
              + " population (default server).")
  String sampling;

  @Option(names = "--rounds", defaultValue = "25", description = "Rounds to train (default 25).")
  int rounds;

  @Option(
      names = "--partition",
      defaultValue = "iid",
      description = "iid or dirichlet (default iid).")
  String partition;

  @Option(
      names = "--alpha",
      defaultValue = "0.5",
      description = "Dirichlet concentration for --partition dirichlet (default 0.5).")
  double alpha;

  @Option(names = "--delta", defaultValue = "1e-5", description = "Delta (default 1e-5).")
  double delta;

  @Option(
      names = "--clip-norm",
      defaultValue = "1.0",
      description = "Server-side L2 clip norm of each update (default 1).")
  double clipNorm;

  @Option(
      names = "--server-lr",
      defaultValue = "1.0",
      description = "Server learning rate (default 1).")
  double serverLr;

  @Option(
      names = "--local-epochs",
      defaultValue = "2",
      description = "Local epochs per round (default 2).")
  int localEpochs;

  @Option(
      names = "--batch-size",
      defaultValue = "8",
      description = "Local minibatch size (default 8).")
  int batchSize;

  @Option(
      names = "--local-lr",
      defaultValue = "0.5",
      description = "Local learning rate (default 0.5).")
  double localLr;

  @Option(
      names = "--dp-sgd-noise",
      description = "Client-side DP-SGD noise multiplier (off by default).")
  Double dpSgdNoise;

  @Option(
      names = "--dp-sgd-clip",
      defaultValue = "1.0",
      description = "DP-SGD per-example clip norm (default 1).")
  double dpSgdClip;

  @Option(
      names = "--local-noise-epsilon",
      description =
          "Local DP: Gaussian noise on each update for this epsilon per round (off by default).")
  Double localNoiseEpsilon;

  @Option(
      names = "--sparsify",
      defaultValue = "1.0",
      description =
          "Share of largest coordinates each client sends; no DP guarantee (default 1 = all).")
  double sparsify;

  @Option(
      names = "--round-timeout-ms",
      defaultValue = "1500",
      description = "Round timeout (default 1500).")
  long roundTimeoutMillis;

  @Option(
      names = "--noise-source",
      defaultValue = "secure",
      description = "secure or seeded (experiments) (default secure).")
  String noiseSource;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of data split, partition and training (default 1).")
  long seed;

  SimulationConfig config(double noiseMultiplier, double targetEpsilon) {
    TrainingOptions training =
        new TrainingOptions(
            localEpochs,
            batchSize,
            localLr,
            dpSgdNoise == null ? null : new TrainingOptions.DpSgd(dpSgdClip, dpSgdNoise, delta),
            localNoiseEpsilon == null
                ? null
                : new TrainingOptions.LocalNoise(localNoiseEpsilon, delta, clipNorm),
            sparsify);
    return new SimulationConfig(
        dataset,
        model,
        hidden,
        clients,
        cohort,
        sampling,
        rounds,
        partition,
        alpha,
        noiseMultiplier,
        targetEpsilon,
        delta,
        clipNorm,
        serverLr,
        training,
        roundTimeoutMillis,
        noiseSource,
        seed);
  }
}
