package dev.privagg.client.train;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class MetricsTest {
  /** More than 46,340 per class: m (m + 1) no longer fits in an int. */
  private static final int LARGE = 50_000;

  @Test
  void auc_isOneWhenMembersAlwaysHaveLowerLoss_halfWhenIndistinguishable() {
    assertThat(Metrics.lossThresholdAuc(new double[] {0.1, 0.2}, new double[] {0.5, 0.9, 1.0}))
        .isEqualTo(1.0);
    assertThat(Metrics.lossThresholdAuc(new double[] {0.5, 0.5}, new double[] {0.5, 0.5}))
        .isEqualTo(0.5);
    assertThat(Metrics.lossThresholdAuc(new double[] {0.9}, new double[] {0.1})).isEqualTo(0.0);
    // One of the four member/non-member pairs is ordered the wrong way: AUC 3/4.
    assertThat(Metrics.lossThresholdAuc(new double[] {0.1, 0.6}, new double[] {0.5, 0.7}))
        .isCloseTo(0.75, within(1e-12));
  }

  @Test
  void auc_countsTiesAsHalf_byHand() {
    // Members {1, 2, 2}, non-members {2, 3}. Pairs (member < non-member = 1, tie = 1/2):
    // 1 vs 2: 1, 1 vs 3: 1, 2 vs 2: 1/2 (twice), 2 vs 3: 1 (twice). Sum 5 of 6 pairs.
    assertThat(Metrics.lossThresholdAuc(new double[] {1, 2, 2}, new double[] {2, 3}))
        .isCloseTo(5.0 / 6, within(1e-15));
  }

  @Test
  void auc_withMoreThan46340MembersPerClass_staysExact() {
    double[] low = new double[LARGE];
    double[] high = new double[LARGE];
    for (int i = 0; i < LARGE; i++) {
      low[i] = i;
      high[i] = LARGE + i;
    }
    assertThat(Metrics.lossThresholdAuc(low, high)).isEqualTo(1.0);
    assertThat(Metrics.lossThresholdAuc(high, low)).isEqualTo(0.0);

    double[] same = new double[LARGE];
    Arrays.fill(same, 0.25);
    assertThat(Metrics.lossThresholdAuc(same, same.clone())).isEqualTo(0.5);

    // Members all at 1; half the non-members tie at 1 (count 1/2), half above at 2 (count 1).
    double[] ones = new double[LARGE];
    Arrays.fill(ones, 1.0);
    double[] halfTied = new double[LARGE];
    Arrays.fill(halfTied, 0, LARGE / 2, 1.0);
    Arrays.fill(halfTied, LARGE / 2, LARGE, 2.0);
    assertThat(Metrics.lossThresholdAuc(ones, halfTied)).isEqualTo(0.75);

    // Members 0, 2, 4, ...; non-members 1, 3, 5, ...: member i is below non-members i..n-1, so
    // n (n + 1) / 2 of the n^2 pairs: AUC (n + 1) / (2 n).
    double[] even = new double[LARGE];
    double[] odd = new double[LARGE];
    for (int i = 0; i < LARGE; i++) {
      even[i] = 2 * i;
      odd[i] = 2 * i + 1;
    }
    assertThat(Metrics.lossThresholdAuc(even, odd))
        .isCloseTo((LARGE + 1.0) / (2.0 * LARGE), within(1e-15));
  }

  @Test
  void auc_ranksNaNLossAsHighest_andIsNaNForAnEmptyClass() {
    assertThat(Metrics.lossThresholdAuc(new double[] {0.1}, new double[] {Double.NaN}))
        .isEqualTo(1.0);
    assertThat(Metrics.lossThresholdAuc(new double[] {Double.NaN}, new double[] {0.1}))
        .isEqualTo(0.0);
    assertThat(Metrics.lossThresholdAuc(new double[0], new double[] {0.1})).isNaN();
  }
}
