package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.audit.CanaryScorer.Scores;
import dev.privagg.audit.CanaryScorer.Statistic;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CanaryScorerTest {
  private static final int DIMS = 500;
  private final CanarySet canaries = new CanarySet(CanarySetTest.SECRET, 3);

  /** Model x_t = x_{t-1} + steps[t-1], from x_0 = 0. */
  private CanaryScorer scored(double[]... steps) {
    CanaryScorer scorer = new CanaryScorer(canaries, DIMS);
    double[] x = new double[DIMS];
    scorer.accept(0, x.clone());
    for (int t = 0; t < steps.length; t++) {
      for (int i = 0; i < DIMS; i++) {
        x[i] += steps[t][i];
      }
      scorer.accept(t + 1, x.clone());
    }
    return scorer;
  }

  private double[] along(int canary, double length) {
    double[] u = canaries.direction(canary, DIMS);
    double[] v = new double[DIMS];
    for (int i = 0; i < DIMS; i++) {
      v[i] = length * u[i];
    }
    return v;
  }

  private static double[] plus(double[] a, double[] b) {
    double[] c = a.clone();
    for (int i = 0; i < c.length; i++) {
      c[i] += b[i];
    }
    return c;
  }

  private double cosine(double[] v, int canary) {
    double[] u = canaries.direction(canary, DIMS);
    double dot = 0;
    double norm = 0;
    for (int i = 0; i < DIMS; i++) {
      dot += v[i] * u[i];
      norm += v[i] * v[i];
    }
    return dot / Math.sqrt(norm);
  }

  // Whitened by a banded C: w_t = sum_k c_k Delta_(t-k), and round s's score the matched filter
  // sum_k c_k cos(u, w_(s+k)) over the rows there are; recomputed here in one pass over all rows.
  @Test
  void whitened_maxAndSum_areTheMatchedFiltersOfTheWhitenedRows() {
    double[] c = {0.8, 0.5, 0.33166247903554};
    SplittableRandom random = new SplittableRandom(11);
    int rounds = 7;
    double[][] steps = new double[rounds][DIMS];
    for (double[] step : steps) {
      for (int i = 0; i < DIMS; i++) {
        step[i] = random.nextGaussian();
      }
    }
    steps[2] = plus(steps[2], along(0, 40));
    CanaryScorer scorer = new CanaryScorer(canaries, DIMS, c);
    double[] x = new double[DIMS];
    scorer.accept(0, x.clone());
    for (int t = 0; t < rounds; t++) {
      for (int i = 0; i < DIMS; i++) {
        x[i] += steps[t][i];
      }
      scorer.accept(t + 1, x.clone());
    }
    assertThat(scorer.whitened()).isTrue();
    for (int j = 0; j < 3; j++) {
      double[] cosines = new double[rounds];
      for (int t = 0; t < rounds; t++) {
        double[] w = new double[DIMS];
        for (int k = 0; k < c.length && k <= t; k++) {
          for (int i = 0; i < DIMS; i++) {
            w[i] += c[k] * steps[t - k][i];
          }
        }
        cosines[t] = cosine(w, j);
      }
      double max = Double.NEGATIVE_INFINITY;
      double sum = 0;
      for (int round = 0; round < rounds; round++) {
        double matched = 0;
        for (int k = 0; k < c.length && round + k < rounds; k++) {
          matched += c[k] * cosines[round + k];
        }
        max = Math.max(max, matched);
        sum += matched;
      }
      assertThat(scorer.scores(Statistic.MAX).inserted()[j]).isCloseTo(max, within(1e-6));
      assertThat(scorer.scores(Statistic.SUM).inserted()[j]).isCloseTo(sum, within(1e-6));
    }
    // Float directions in the scorer: agreement to 1e-6. The inserted canary stands out of its
    // round: its matched filter there is near 1.
    assertThat(scorer.scores(Statistic.MAX).inserted()[0]).isGreaterThan(0.9);
  }

  @Test
  void whiteningByOne_scoresTheDeltasAsTheyAre() {
    double[] step1 = plus(along(0, 3), along(4, 1));
    double[] step2 = plus(along(1, 2), along(2, 5));
    CanaryScorer plain = scored(step1, step2);
    CanaryScorer byOne = new CanaryScorer(canaries, DIMS, new double[] {1});
    byOne.accept(0, new double[DIMS]);
    byOne.accept(1, step1.clone());
    byOne.accept(2, plus(step1, step2));
    assertThat(byOne.whitened()).isFalse();
    for (Statistic statistic : Statistic.values()) {
      assertThat(byOne.scores(statistic).inserted())
          .containsExactly(plain.scores(statistic).inserted());
      assertThat(byOne.scores(statistic).unseen())
          .containsExactly(plain.scores(statistic).unseen());
    }
  }

  @Test
  void eachStatistic_isTheCosineWithEachRoundsDelta_maxedSummedOrOfTheTotal() {
    double[] step1 = plus(along(0, 3), along(4, 1));
    double[] step2 = plus(along(1, 2), along(0, -1));
    CanaryScorer scorer = scored(step1, step2);
    assertThat(scorer.deltas()).isEqualTo(2);
    Scores max = scorer.scores(Statistic.MAX);
    Scores sum = scorer.scores(Statistic.SUM);
    Scores fin = scorer.scores(Statistic.FINAL);
    double[] total = plus(step1, step2);
    for (int j = 0; j < 6; j++) {
      double c1 = cosine(step1, j);
      double c2 = cosine(step2, j);
      double m = j < 3 ? max.inserted()[j] : max.unseen()[j - 3];
      double s = j < 3 ? sum.inserted()[j] : sum.unseen()[j - 3];
      double f = j < 3 ? fin.inserted()[j] : fin.unseen()[j - 3];
      assertThat(m).as("max of canary %d", j).isCloseTo(Math.max(c1, c2), within(1e-6));
      assertThat(s).as("sum of canary %d", j).isCloseTo(c1 + c2, within(1e-6));
      assertThat(f).as("final of canary %d", j).isCloseTo(cosine(total, j), within(1e-6));
    }
    // The canary the first step points along scores about 3 / sqrt(10).
    assertThat(max.inserted()[0]).isCloseTo(3 / Math.sqrt(10), within(0.15));
    assertThat(max.unseen()).hasSize(3);
  }

  @Test
  void aZeroDelta_scoresZero() {
    CanaryScorer scorer = scored(new double[DIMS]);
    assertThat(scorer.scores(Statistic.MAX).inserted()).containsExactly(0, 0, 0);
    assertThat(scorer.scores(Statistic.FINAL).unseen()).containsExactly(0, 0, 0);
  }

  /**
   * Pure noise steps: a fixed canary's cosine with an isotropic Gaussian is about N(0, 1/d), so the
   * sum over 40 rounds has sd sqrt(40/d) = 0.283: the 6 sums stay within 5 sd except with
   * probability 6 * 6e-7.
   */
  @Test
  void noiseOnly_givesScoresCenteredOnZero() {
    SplittableRandom random = new SplittableRandom(11);
    double[][] steps = new double[40][DIMS];
    for (double[] step : steps) {
      for (int i = 0; i < DIMS; i++) {
        step[i] = random.nextGaussian();
      }
    }
    Scores sum = scored(steps).scores(Statistic.SUM);
    double sd = Math.sqrt(40.0 / DIMS);
    for (double s : sum.inserted()) {
      assertThat(Math.abs(s)).isLessThan(5 * sd);
    }
    for (double s : sum.unseen()) {
      assertThat(Math.abs(s)).isLessThan(5 * sd);
    }
  }

  @Test
  void modelsOutOfOrderOrOfAnotherSizeOrNotFinite_areRefused() {
    CanaryScorer scorer = new CanaryScorer(canaries, DIMS);
    assertThatThrownBy(() -> scorer.scores(Statistic.MAX))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("nothing to score");
    scorer.accept(3, new double[DIMS]);
    assertThatThrownBy(() -> scorer.accept(3, new double[DIMS]))
        .hasMessage("models must come in increasing round order: round 3 after 3");
    assertThatThrownBy(() -> scorer.accept(4, new double[DIMS - 1]))
        .hasMessage("round 4's model has 499 parameters, expected 500");
    double[] bad = new double[DIMS];
    bad[7] = Double.NaN;
    assertThatThrownBy(() -> scorer.accept(4, bad))
        .hasMessage("round 4's model has a non-finite value");
  }
}
