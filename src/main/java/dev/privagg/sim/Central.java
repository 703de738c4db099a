package dev.privagg.sim;

import dev.privagg.client.data.Dataset;
import dev.privagg.client.data.Datasets;
import dev.privagg.client.train.LocalTrainer;
import dev.privagg.client.train.Metrics;
import dev.privagg.client.train.Model;
import dev.privagg.client.train.TrainingOptions;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * The central baseline of a simulation: the same model, from the same round-0 weights, trained by
 * the same {@link LocalTrainer} on the pooled training data of all clients, without federation,
 * clipping or noise. It shows what federation (and then privacy) costs.
 */
public final class Central {
  private Central() {}

  /** Test accuracy after one epoch over the pooled data. */
  public record Epoch(int epoch, double accuracy, long millis) {}

  /** Every epoch's accuracy and the final one; {@code testSize} for a binomial interval. */
  public record Result(List<Epoch> epochs, double finalAccuracy, int testSize) {}

  /**
   * Trains {@code config}'s model on {@code config}'s dataset (the whole training split) for {@code
   * epochs} epochs of plain minibatch SGD.
   */
  public static Result train(
      SimulationConfig config,
      int epochs,
      int batchSize,
      double learningRate,
      Consumer<Epoch> progress) {
    if (epochs < 1) {
      throw new IllegalArgumentException("epochs must be >= 1, was " + epochs);
    }
    TrainingOptions oneEpoch = TrainingOptions.sgd(1, batchSize, learningRate);
    Datasets.Split data = Datasets.load(config.dataset(), config.seed());
    Model model =
        Model.named(
            config.model(), data.train().numFeatures(), data.train().numClasses(), config.hidden());
    JobSpec spec = JobSpecReader.parse("central", Simulation.specYaml(config, model));
    double[][] params = split(spec.initialWeights(), spec.model().tensorSizes());
    SplittableRandom random = new SplittableRandom(config.seed() * 1_000_003L - 1);
    Dataset pooled = data.train();
    List<Epoch> out = new ArrayList<>();
    long start = System.currentTimeMillis();
    for (int e = 1; e <= epochs; e++) {
      float[][] update = LocalTrainer.train(model, params, pooled, oneEpoch, random, null).update();
      for (int t = 0; t < params.length; t++) {
        for (int i = 0; i < params[t].length; i++) {
          params[t][i] += update[t][i];
        }
      }
      Epoch epoch =
          new Epoch(
              e, Metrics.accuracy(model, params, data.test()), System.currentTimeMillis() - start);
      out.add(epoch);
      progress.accept(epoch);
    }
    return new Result(out, out.get(out.size() - 1).accuracy(), data.test().size());
  }

  /** A flat weight vector as tensors of the given sizes. */
  static double[][] split(float[] flat, int[] sizes) {
    double[][] out = new double[sizes.length][];
    int k = 0;
    for (int t = 0; t < sizes.length; t++) {
      out[t] = new double[sizes[t]];
      for (int i = 0; i < sizes[t]; i++) {
        out[t][i] = flat[k++];
      }
    }
    return out;
  }
}
