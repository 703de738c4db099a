package dev.privagg.client.train;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class MetricsTest {
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
}
