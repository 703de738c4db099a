package dev.privagg.client.train;

import dev.privagg.client.data.Dataset;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.ClippingPolicy;
import dev.privagg.privacy.GaussianCalibration;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import java.util.Arrays;
import java.util.SplittableRandom;

/** Trains a model on one client's data from the announced base model and returns the update. */
public final class LocalTrainer {
  private LocalTrainer() {}

  /**
   * What a client sends and what its local options cost.
   *
   * @param update trained minus base, as float32 tensors
   * @param dpSgdEvent the DP-SGD steps as one ledger event, or null without DP-SGD
   * @param dpSgdEpsilon epsilon of those steps at the option's delta (sample-level), or NaN
   */
  public record Result(float[][] update, PrivacyEvent dpSgdEvent, double dpSgdEpsilon) {}

  public static Result train(
      Model model,
      double[][] base,
      Dataset data,
      TrainingOptions options,
      SplittableRandom random,
      NoiseStream noise) {
    double[][] params = new double[base.length][];
    for (int t = 0; t < base.length; t++) {
      params[t] = base[t].clone();
    }
    PrivacyEvent event = null;
    double epsilon = Double.NaN;
    if (data.size() > 0) {
      if (options.dpSgd() == null) {
        sgd(model, params, data, options, random);
      } else {
        event = dpSgd(model, params, data, options, random, noise);
        epsilon =
            Accountant.named("rdp")
                .epsilon(PrivacyLedger.of(event), options.dpSgd().delta())
                .epsilon();
      }
    }
    float[][] update = new float[params.length][];
    for (int t = 0; t < params.length; t++) {
      update[t] = new float[params[t].length];
      for (int i = 0; i < update[t].length; i++) {
        update[t][i] = (float) (params[t][i] - base[t][i]);
      }
    }
    if (options.localNoise() != null) {
      addLocalNoise(update, options.localNoise(), noise);
    }
    if (options.privateTopK() != null) {
      options.privateTopK().applyInPlace(update, noise);
    }
    if (options.sparsifyFraction() < 1) {
      sparsify(update, options.sparsifyFraction());
    }
    return new Result(update, event, epsilon);
  }

  private static void sgd(
      Model model, double[][] params, Dataset data, TrainingOptions o, SplittableRandom random) {
    int n = data.size();
    double[][] grad = model.zeros();
    for (int epoch = 0; epoch < o.epochs(); epoch++) {
      int[] order = dev.privagg.client.data.Datasets.permutation(n, random);
      for (int start = 0; start < n; start += o.batchSize()) {
        int end = Math.min(n, start + o.batchSize());
        zero(grad);
        for (int k = start; k < end; k++) {
          model.lossAndGradient(params, data.features()[order[k]], data.labels()[order[k]], grad);
        }
        step(params, grad, o.learningRate() / (end - start));
      }
    }
  }

  /**
   * Abadi et al. 2016, Algorithm 1, with Poisson sampling: each step takes every example with
   * probability q = batchSize / n, clips each example's gradient to C, adds N(0, (sigma C)^2) to
   * the sum and divides by the expected batch size (not the sampled count, which is private).
   */
  private static PrivacyEvent dpSgd(
      Model model,
      double[][] params,
      Dataset data,
      TrainingOptions o,
      SplittableRandom random,
      NoiseStream noise) {
    int n = data.size();
    double q = Math.min(1.0, (double) o.batchSize() / n);
    int steps = o.epochs() * (int) Math.ceil(n / (double) Math.min(o.batchSize(), n));
    double clip = o.dpSgd().clipNorm();
    double sigma = o.dpSgd().noiseMultiplier() * clip;
    double[][] sum = model.zeros();
    double[][] one = model.zeros();
    for (int s = 0; s < steps; s++) {
      zero(sum);
      for (int i = 0; i < n; i++) {
        if (random.nextDouble() < q) {
          zero(one);
          model.lossAndGradient(params, data.features()[i], data.labels()[i], one);
          double scale = Math.min(1, clip / norm(one));
          for (int t = 0; t < sum.length; t++) {
            for (int j = 0; j < sum[t].length; j++) {
              sum[t][j] += scale * one[t][j];
            }
          }
        }
      }
      for (double[] tensor : sum) {
        noise.addGaussian(tensor, sigma);
      }
      step(params, sum, o.learningRate() / (q * n));
    }
    return PrivacyEvent.sampledGaussian(o.dpSgd().noiseMultiplier(), q, steps);
  }

  /** Local DP: the update is clipped to C, so any two datasets' updates differ by at most 2C. */
  private static void addLocalNoise(
      float[][] update, TrainingOptions.LocalNoise o, NoiseStream noise) {
    ClippingPolicy.flat(o.clipNorm()).clipInPlace(update);
    double sigma = GaussianCalibration.analyticSigma(o.epsilon(), o.delta(), 2 * o.clipNorm());
    for (float[] tensor : update) {
      for (int i = 0; i < tensor.length; i++) {
        tensor[i] = (float) (tensor[i] + sigma * noise.nextStandardNormal());
      }
    }
  }

  /** Keeps the {@code fraction} of coordinates with the largest magnitude, zeroes the rest. */
  static void sparsify(float[][] update, double fraction) {
    int total = Arrays.stream(update).mapToInt(t -> t.length).sum();
    int keep = Math.max(1, (int) Math.ceil(fraction * total));
    float[] magnitudes = new float[total];
    int k = 0;
    for (float[] tensor : update) {
      for (float v : tensor) {
        magnitudes[k++] = Math.abs(v);
      }
    }
    Arrays.sort(magnitudes);
    float threshold = magnitudes[total - keep];
    int kept = 0;
    for (float[] tensor : update) {
      for (int i = 0; i < tensor.length; i++) {
        if (Math.abs(tensor[i]) >= threshold && kept < keep) {
          kept++;
        } else {
          tensor[i] = 0;
        }
      }
    }
  }

  static double norm(double[][] tensors) {
    double sq = 0;
    for (double[] t : tensors) {
      for (double v : t) {
        sq += v * v;
      }
    }
    return Math.sqrt(sq);
  }

  private static void step(double[][] params, double[][] grad, double factor) {
    for (int t = 0; t < params.length; t++) {
      for (int i = 0; i < params[t].length; i++) {
        params[t][i] -= factor * grad[t][i];
      }
    }
  }

  private static void zero(double[][] a) {
    for (double[] t : a) {
      Arrays.fill(t, 0);
    }
  }
}
