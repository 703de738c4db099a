package dev.privagg.client.train;

import dev.privagg.spec.JobSpec;
import java.util.List;

/** Multinomial logistic regression: logits = x W + b, W of shape [features, classes]. */
public final class SoftmaxRegression implements Model {
  private final int features;
  private final int classes;

  public SoftmaxRegression(int features, int classes) {
    this.features = features;
    this.classes = classes;
  }

  @Override
  public String name() {
    return "softmax";
  }

  @Override
  public List<JobSpec.TensorSpec> tensors() {
    return List.of(
        new JobSpec.TensorSpec("weights", new int[] {features, classes}),
        new JobSpec.TensorSpec("bias", new int[] {classes}));
  }

  private double[] logits(double[][] params, double[] x) {
    double[] w = params[0];
    double[] z = params[1].clone();
    for (int i = 0; i < features; i++) {
      double xi = x[i];
      if (xi != 0) {
        int row = i * classes;
        for (int j = 0; j < classes; j++) {
          z[j] += xi * w[row + j];
        }
      }
    }
    return z;
  }

  @Override
  public double lossAndGradient(double[][] params, double[] x, int label, double[][] gradient) {
    double[] z = logits(params, x);
    double[] p = new double[classes];
    double loss = Model.softmaxCrossEntropy(z, label, p);
    if (gradient != null) {
      p[label] -= 1; // d loss / d z = p - onehot(label)
      for (int i = 0; i < features; i++) {
        double xi = x[i];
        if (xi != 0) {
          int row = i * classes;
          for (int j = 0; j < classes; j++) {
            gradient[0][row + j] += xi * p[j];
          }
        }
      }
      for (int j = 0; j < classes; j++) {
        gradient[1][j] += p[j];
      }
    }
    return loss;
  }

  @Override
  public int predict(double[][] params, double[] x) {
    double[] z = logits(params, x);
    int best = 0;
    for (int j = 1; j < z.length; j++) {
      if (z[j] > z[best]) {
        best = j;
      }
    }
    return best;
  }
}
