package dev.privagg.client.train;

import dev.privagg.spec.JobSpec;
import java.util.List;

/** One hidden ReLU layer: logits = relu(x W1 + b1) W2 + b2. Needs a random initial model. */
public final class Mlp implements Model {
  private final int features;
  private final int hidden;
  private final int classes;

  public Mlp(int features, int hidden, int classes) {
    if (hidden < 1) {
      throw new IllegalArgumentException("hidden units must be >= 1, was " + hidden);
    }
    this.features = features;
    this.hidden = hidden;
    this.classes = classes;
  }

  @Override
  public String name() {
    return "mlp";
  }

  @Override
  public List<JobSpec.TensorSpec> tensors() {
    return List.of(
        new JobSpec.TensorSpec("hidden.weights", new int[] {features, hidden}),
        new JobSpec.TensorSpec("hidden.bias", new int[] {hidden}),
        new JobSpec.TensorSpec("output.weights", new int[] {hidden, classes}),
        new JobSpec.TensorSpec("output.bias", new int[] {classes}));
  }

  private double[] hiddenPre(double[][] params, double[] x) {
    double[] pre = params[1].clone();
    double[] w1 = params[0];
    for (int i = 0; i < features; i++) {
      double xi = x[i];
      if (xi != 0) {
        int row = i * hidden;
        for (int m = 0; m < hidden; m++) {
          pre[m] += xi * w1[row + m];
        }
      }
    }
    return pre;
  }

  private double[] logits(double[][] params, double[] activation) {
    double[] z = params[3].clone();
    double[] w2 = params[2];
    for (int m = 0; m < hidden; m++) {
      double a = activation[m];
      if (a != 0) {
        int row = m * classes;
        for (int j = 0; j < classes; j++) {
          z[j] += a * w2[row + j];
        }
      }
    }
    return z;
  }

  @Override
  public double lossAndGradient(double[][] params, double[] x, int label, double[][] gradient) {
    double[] pre = hiddenPre(params, x);
    double[] a = new double[hidden];
    for (int m = 0; m < hidden; m++) {
      a[m] = Math.max(0, pre[m]);
    }
    double[] z = logits(params, a);
    double[] p = new double[classes];
    double loss = Model.softmaxCrossEntropy(z, label, p);
    if (gradient != null) {
      p[label] -= 1;
      double[] w2 = params[2];
      double[] dPre = new double[hidden];
      for (int m = 0; m < hidden; m++) {
        int row = m * classes;
        double da = 0;
        for (int j = 0; j < classes; j++) {
          gradient[2][row + j] += a[m] * p[j];
          da += w2[row + j] * p[j];
        }
        dPre[m] = pre[m] > 0 ? da : 0;
      }
      for (int j = 0; j < classes; j++) {
        gradient[3][j] += p[j];
      }
      for (int i = 0; i < features; i++) {
        double xi = x[i];
        if (xi != 0) {
          int row = i * hidden;
          for (int m = 0; m < hidden; m++) {
            gradient[0][row + m] += xi * dPre[m];
          }
        }
      }
      for (int m = 0; m < hidden; m++) {
        gradient[1][m] += dPre[m];
      }
    }
    return loss;
  }

  @Override
  public int predict(double[][] params, double[] x) {
    double[] pre = hiddenPre(params, x);
    for (int m = 0; m < hidden; m++) {
      pre[m] = Math.max(0, pre[m]);
    }
    double[] z = logits(params, pre);
    int best = 0;
    for (int j = 1; j < z.length; j++) {
      if (z[j] > z[best]) {
        best = j;
      }
    }
    return best;
  }
}
