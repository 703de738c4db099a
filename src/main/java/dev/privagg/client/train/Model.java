package dev.privagg.client.train;

import dev.privagg.spec.JobSpec;
import java.util.List;

/**
 * A classifier whose parameters are a list of tensors (the layout a job spec declares), with
 * per-example loss and gradient so that DP-SGD can clip each example's contribution.
 */
public interface Model {
  /** Name used on the command line: {@code softmax} or {@code mlp}. */
  String name();

  /** The tensors, in the order updates and models carry them. */
  List<JobSpec.TensorSpec> tensors();

  /**
   * Cross-entropy loss of one example; when {@code gradient} is not null, adds that example's
   * gradient into it (same layout as {@code params}).
   */
  double lossAndGradient(double[][] params, double[] x, int label, double[][] gradient);

  /** The most likely class. */
  int predict(double[][] params, double[] x);

  /** Zeroed arrays shaped like the parameters. */
  default double[][] zeros() {
    List<JobSpec.TensorSpec> t = tensors();
    double[][] out = new double[t.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = new double[t.get(i).size()];
    }
    return out;
  }

  /** The model for {@code name} with the given input and class counts. */
  static Model named(String name, int features, int classes, int hidden) {
    return switch (name) {
      case "softmax" -> new SoftmaxRegression(features, classes);
      case "mlp" -> new Mlp(features, hidden, classes);
      default ->
          throw new IllegalArgumentException("model must be softmax or mlp, was '" + name + "'");
    };
  }

  /** log sum exp(z) - z[label], computed stably; writes softmax probabilities into {@code p}. */
  static double softmaxCrossEntropy(double[] z, int label, double[] p) {
    double max = Double.NEGATIVE_INFINITY;
    for (double v : z) {
      max = Math.max(max, v);
    }
    double sum = 0;
    for (int j = 0; j < z.length; j++) {
      p[j] = Math.exp(z[j] - max);
      sum += p[j];
    }
    for (int j = 0; j < z.length; j++) {
      p[j] /= sum;
    }
    return Math.log(sum) + max - z[label];
  }
}
