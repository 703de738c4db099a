package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;

/**
 * The noise a correlated job released with all-zero updates, read off its models, and the check
 * that C times it is sigma Z: i.i.d. N(0, sigma^2) coordinates, uncorrelated across rounds. Each
 * bound is 5 standard errors, so a correct job fails it with probability below 1e-6.
 */
final class ReleasedNoise {
  private ReleasedNoise() {}

  /**
   * Checks C (first column {@code c}, zero past it) times the released noise against sigma Z, and
   * returns the released noise's own lag-1 correlation, which the caller expects far from 0.
   *
   * @param models the released models of rounds 1..n, each d long
   * @param m the average's denominator: round t's noise is m (model_t - model_(t-1))
   */
  static double assertWhitenedByC(List<float[]> models, double m, double[] c, double sigma) {
    int rounds = models.size();
    int d = models.get(0).length;
    double[][] noise = new double[rounds][d];
    float[] previous = new float[d];
    for (int t = 0; t < rounds; t++) {
      float[] model = models.get(t);
      for (int i = 0; i < d; i++) {
        noise[t][i] = ((double) model[i] - previous[i]) * m;
      }
      previous = model;
    }
    double[][] whitened = new double[rounds][d];
    for (int t = 0; t < rounds; t++) {
      for (int k = 0; k <= t && k < c.length; k++) {
        for (int i = 0; i < d; i++) {
          whitened[t][i] += c[k] * noise[t - k][i];
        }
      }
    }
    int samples = rounds * d;
    double sumSq = 0;
    double lag1 = 0;
    double rawLag1 = 0;
    double rawSq = 0;
    for (int t = 0; t < rounds; t++) {
      for (int i = 0; i < d; i++) {
        sumSq += whitened[t][i] * whitened[t][i];
        rawSq += noise[t][i] * noise[t][i];
        if (t > 0) {
          lag1 += whitened[t][i] * whitened[t - 1][i];
          rawLag1 += noise[t][i] * noise[t - 1][i];
        }
      }
    }
    double variance = sumSq / samples;
    assertThat(variance / (sigma * sigma)).isCloseTo(1, within(5 * Math.sqrt(2.0 / samples)));
    assertThat(lag1 / sumSq).isCloseTo(0, within(5 / Math.sqrt(samples)));
    return rawLag1 / rawSq;
  }

  /** The bound past which a released noise's lag-1 correlation is clearly not 0: 10 se. */
  static double clearlyCorrelated(int rounds, int d) {
    return 10 / Math.sqrt((double) rounds * d);
  }
}
