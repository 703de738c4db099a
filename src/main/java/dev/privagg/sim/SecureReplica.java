package dev.privagg.sim;

import dev.privagg.client.data.Dataset;
import dev.privagg.client.data.Datasets;
import dev.privagg.client.train.LocalTrainer;
import dev.privagg.client.train.Metrics;
import dev.privagg.client.train.Model;
import dev.privagg.distributed.DistributedNoisePlan;
import dev.privagg.distributed.GridEncoder;
import dev.privagg.job.combine.NoiseStreams;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.privacy.NoisyAverage;
import dev.privagg.secagg.Quantizer;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.IntStream;

/**
 * A job's rounds in memory, every client in every round, for cohorts too large to run through Kafka
 * and Flink on a small machine: the spec the simulator would run (its planned z, gate and
 * distributed-noise plan), the same trainer, the job's unmasking gate, clipping, {@link
 * GridEncoder}, Gaussian mechanism, {@link NoisyAverage} and server step. Only the masking is left
 * out: masks cancel exactly, so a secure round unmasks the modular sum of the clients' words, which
 * is what this adds up (SecureAggregationIT checks the job releases exactly that). Plaintext and
 * secure jobs with central noise sum the clipped updates in doubles, which their 64-bit fixed point
 * matches to far below the noise.
 */
public final class SecureReplica {
  private SecureReplica() {}

  /** One round: test accuracy after its release, and whether its sum was in it. */
  public record Round(long round, double accuracy, boolean summed) {}

  /**
   * A run: every round, the final accuracy and the spec's figures.
   *
   * @param noiseStdOfSum the noise std a round of every client carries, in units of C
   * @param finalWeights the model after the last round
   */
  public record Result(
      List<Round> rounds,
      double finalAccuracy,
      int testSize,
      double noiseMultiplier,
      double noiseStdOfSum,
      float[] finalWeights) {}

  /**
   * Runs {@code config}'s rounds with all {@code config.clients()} clients in each; the cohort the
   * job divides by is {@code config.expectedClients()}.
   *
   * @throws IllegalArgumentException if the job would refuse the spec, or clients are sampled
   */
  public static Result run(SimulationConfig config, Consumer<Round> progress) {
    return run(config, 0, progress);
  }

  /**
   * As {@link #run(SimulationConfig, Consumer)}, with each client dropping out of each round with
   * probability {@code dropoutRate} before it trains (the same clients whatever the variant, for a
   * seed): the gate then counts fewer inputs, and distributed noise is topped up by the job.
   */
  public static Result run(SimulationConfig config, double dropoutRate, Consumer<Round> progress) {
    if (!(dropoutRate >= 0 && dropoutRate < 1)) {
      throw new IllegalArgumentException("dropoutRate must be in [0, 1), was " + dropoutRate);
    }
    if (!config.sampling().equals("server")
        || config.expectedClients() != config.clients()
        || config.adaptiveClipping() != null
        || config.canaries() > 0) {
      throw new IllegalArgumentException(
          "a replica runs every client in every round at a fixed C: sampling must be server, the"
              + " cohort all clients, clipping fixed and no canaries");
    }
    Datasets.Split data = Datasets.load(config.dataset(), config.seed());
    Model model =
        Model.named(
            config.model(), data.train().numFeatures(), data.train().numClasses(), config.hidden());
    JobSpec spec = JobSpecReader.parse("replica", Simulation.specYaml(config, model));
    List<Dataset> local = Simulation.localData(config, data.train());
    int[] sizes = spec.model().tensorSizes();
    float[] weights = spec.initialWeights();
    ServerOptimizer optimizer = spec.serverOptimizer();
    ServerOptimizer.State moments = optimizer.initialState(weights.length);
    NoiseSource serverNoise = NoiseSource.seeded(config.seed() * 31 + 7);
    double clipNorm = spec.privacy().clipNorm();
    int m = spec.rounds().expectedClients();
    List<Round> rounds = new ArrayList<>();
    for (long r = 1; r <= config.rounds(); r++) {
      double[][] base = Central.split(weights, sizes);
      long round = r;
      SplittableRandom dropouts = new SplittableRandom(config.seed() * 7_919L + round);
      int[] sending =
          IntStream.range(0, local.size())
              .filter(c -> dropouts.nextDouble() >= dropoutRate)
              .toArray();
      double[][] updates =
          Arrays.stream(sending)
              .parallel()
              .mapToObj(
                  c ->
                      Quantizer.flatten(
                          LocalTrainer.train(
                                  model,
                                  base,
                                  local.get(c),
                                  config.training(),
                                  new SplittableRandom(
                                      config.seed() * 1_000_003L + round * 7919L + c),
                                  null)
                              .update()))
              .toArray(double[][]::new);
      boolean summed = gatePasses(spec, serverNoise, round, updates.length);
      double[] sum;
      double[] noise;
      if (summed && spec.distributedNoise() != null) {
        NoiseStream topUp = serverNoise.forRound(NoiseStreams.sum(spec), round);
        sum = distributedSum(spec, round, updates, clipNorm, config.seed(), topUp);
        noise = new double[sum.length];
      } else {
        sum = summed ? clippedSum(updates, clipNorm, weights.length) : new double[weights.length];
        NoiseStream stream = serverNoise.forRound(NoiseStreams.sum(spec), round);
        noise = spec.mechanism(clipNorm).noise(weights.length, stream);
      }
      optimizer.step(weights, NoisyAverage.average(sum, noise, m), moments);
      Round done =
          new Round(r, Metrics.accuracy(model, Central.split(weights, sizes), data.test()), summed);
      rounds.add(done);
      progress.accept(done);
    }
    return new Result(
        rounds,
        rounds.get(rounds.size() - 1).accuracy(),
        data.test().size(),
        spec.privacy().noiseMultiplier(),
        noiseStdOfSum(spec, local.size()),
        weights);
  }

  /** The noise std, in units of C, on a round of {@code inputs} (each with its share, if any). */
  static double noiseStdOfSum(JobSpec spec, int inputs) {
    DistributedNoisePlan plan = spec.distributedNoise();
    if (plan == null) {
      return spec.mechanism(1).sigma();
    }
    // Topped up to maxInputs shares; the rotation is orthonormal, so each coordinate keeps the
    // shares' per-word variance.
    return Math.sqrt(Math.max(inputs, plan.maxInputs()) * plan.share().sigmaSquared())
        / plan.unitsPerClipNorm();
  }

  /** The job's gate: a noisy count of the round's inputs at least the spec's minimum. */
  private static boolean gatePasses(JobSpec spec, NoiseSource source, long round, int inputs) {
    if (spec.rounds().minimumCohort() <= 0) {
      return true;
    }
    NoiseStream noise = source.forRound(NoiseStreams.minimumCohort(spec), round);
    double count = inputs + spec.rounds().minimumCohortNoiseStd() * noise.nextStandardNormal();
    return count >= spec.rounds().minimumCohort();
  }

  /** What a distributed-noise round unmasks, decoded: the sum of every client's words. */
  private static double[] distributedSum(
      JobSpec spec, long round, double[][] updates, double clipNorm, long seed, NoiseStream topUp) {
    GridEncoder encoder = new GridEncoder(spec.distributedNoise(), spec.jobId(), round);
    long[] words = new long[spec.distributedNoise().paddedDimension()];
    IntStream.range(0, updates.length)
        .parallel()
        .mapToObj(
            c ->
                encoder.encode(
                    updates[c],
                    clipNorm,
                    new SplittableRandom(seed * 998_244_353L + round * 1_000_003L + c)))
        .forEachOrdered(
            w -> {
              for (int j = 0; j < words.length; j++) {
                words[j] += w[j];
              }
            });
    return encoder.release(words, updates.length, clipNorm, topUp.bits());
  }

  /** The sum of the updates, each scaled down to L2 norm at most {@code clipNorm}. */
  private static double[] clippedSum(double[][] updates, double clipNorm, int d) {
    double[] sum = new double[d];
    for (double[] u : updates) {
      double squares = 0;
      for (double v : u) {
        squares += v * v;
      }
      double scale = Math.min(1, clipNorm / Math.sqrt(squares));
      for (int j = 0; j < d; j++) {
        sum[j] += u[j] * (squares == 0 ? 1 : scale);
      }
    }
    return sum;
  }
}
