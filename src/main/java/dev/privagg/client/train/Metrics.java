package dev.privagg.client.train;

import dev.privagg.client.data.Dataset;
import java.util.Arrays;

/** Accuracy, per-example losses and the loss-threshold membership-inference AUC. */
public final class Metrics {
  private Metrics() {}

  public static double accuracy(Model model, double[][] params, Dataset data) {
    int correct = 0;
    for (int i = 0; i < data.size(); i++) {
      if (model.predict(params, data.features()[i]) == data.labels()[i]) {
        correct++;
      }
    }
    return data.size() == 0 ? Double.NaN : (double) correct / data.size();
  }

  public static double[] losses(Model model, double[][] params, Dataset data) {
    double[] out = new double[data.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = model.lossAndGradient(params, data.features()[i], data.labels()[i], null);
    }
    return out;
  }

  /**
   * AUC of the loss-threshold attack (Yeom et al. 2018): the probability that a random member has a
   * lower loss than a random non-member (ties count half), by the Mann-Whitney U statistic. 0.5
   * means the attacker learns nothing.
   */
  public static double lossThresholdAuc(double[] memberLosses, double[] nonMemberLosses) {
    int m = memberLosses.length;
    int n = nonMemberLosses.length;
    double[] all = new double[m + n];
    boolean[] member = new boolean[m + n];
    Integer[] order = new Integer[m + n];
    for (int i = 0; i < m; i++) {
      all[i] = memberLosses[i];
      member[i] = true;
    }
    System.arraycopy(nonMemberLosses, 0, all, m, n);
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(all[a], all[b]));
    // Ranks in ascending loss with ties averaged; members should have low losses.
    double memberRankSum = 0;
    int i = 0;
    while (i < order.length) {
      int j = i;
      while (j + 1 < order.length && all[order[j + 1]] == all[order[i]]) {
        j++;
      }
      double rank = (i + j) / 2.0 + 1;
      for (int k = i; k <= j; k++) {
        if (member[order[k]]) {
          memberRankSum += rank;
        }
      }
      i = j + 1;
    }
    double u = memberRankSum - m * (m + 1) / 2.0; // pairs where the member's loss is higher
    return 1 - u / ((double) m * n);
  }
}
