package dev.privagg.client.train;

import dev.privagg.client.data.Dataset;
import org.apache.commons.statistics.ranking.NaNStrategy;
import org.apache.commons.statistics.ranking.NaturalRanking;
import org.apache.commons.statistics.ranking.TiesStrategy;

/** Accuracy, per-example losses and the loss-threshold membership-inference AUC. */
public final class Metrics {
  private static final NaturalRanking RANKING =
      new NaturalRanking(NaNStrategy.MAXIMAL, TiesStrategy.AVERAGE);

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
   * lower loss than a random non-member, ties counting half. 0.5 means the attacker learns nothing.
   *
   * <p>By the Mann-Whitney U statistic: with all m + n losses ranked in ascending order (ties get
   * their average rank) and R the sum of the members' ranks, U = R - m (m + 1) / 2 counts the
   * (member, non-member) pairs where the member's loss is higher (ties half), and AUC = 1 - U / (m
   * n). Everything is in double, exact for any m + n below 2^26 (an int m (m + 1) overflows past m
   * = 46,340). A NaN loss ranks as the highest loss. NaN when either array is empty.
   */
  public static double lossThresholdAuc(double[] memberLosses, double[] nonMemberLosses) {
    int m = memberLosses.length;
    int n = nonMemberLosses.length;
    double[] all = new double[m + n];
    System.arraycopy(memberLosses, 0, all, 0, m);
    System.arraycopy(nonMemberLosses, 0, all, m, n);
    double[] ranks = RANKING.apply(all);
    double memberRankSum = 0;
    for (int i = 0; i < m; i++) {
      memberRankSum += ranks[i];
    }
    double u = memberRankSum - m * (m + 1.0) / 2;
    return 1 - u / ((double) m * n);
  }
}
