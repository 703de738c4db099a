package dev.privagg.statistics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StatisticsQueryTest {
  static Feature age() {
    return new Feature(
        "age",
        20,
        80,
        EnumSet.of(Statistic.MEAN, Statistic.VARIANCE, Statistic.QUANTILES),
        new double[] {20, 40, 60, 80},
        new double[] {0.5},
        1);
  }

  static Feature income() {
    return new Feature("income", 0, 10, EnumSet.of(Statistic.SUM), null, null, 2);
  }

  @Test
  void blocks_haveTheBoundedSumsSensitivities_andSharesByWeight() {
    StatisticsQuery q =
        new StatisticsQuery(
            5, List.of(age(), income()), new StatisticsQuery.KindWeights(1, 2, 3, 4));
    List<Block> blocks = q.blocks();
    assertThat(blocks)
        .extracting(Block::name)
        .containsExactly("count", "age.sum", "age.sumOfSquares", "age.histogram", "income.sum");
    // R = 5; age h = 30, income h = 5 (written out by hand, not through Feature).
    assertThat(blocks)
        .extracting(Block::sensitivity)
        .containsExactly(5.0, 150.0, 2250.0, 5.0, 25.0);
    // weights: count 1, age.sum 2, age.sumOfSquares 3, age.histogram 4, income.sum 2 * 2 = 4
    assertThat(blocks)
        .extracting(Block::share)
        .containsExactly(1 / 14.0, 2 / 14.0, 3 / 14.0, 4 / 14.0, 4 / 14.0);
    assertThat(blocks.get(3).size()).isEqualTo(3);
    assertThat(q.dimension()).isEqualTo(7);
    Block sum = blocks.get(1);
    // z Delta / sqrt(share) at z = 2, over the headroom factor 1 - 2^-19
    assertThat(sum.noiseStd(2))
        .isCloseTo(2 * 150 / Math.sqrt(2 / 14.0) / (1 - 0x1p-19), within(1e-9));
    assertThat(sum.blockNoiseMultiplier(2)).isCloseTo(2 / Math.sqrt(2 / 14.0), within(1e-12));
  }

  @Test
  void features_refuseWhatTheyCannotRelease_namingTheField() {
    assertThatThrownBy(() -> new Feature("x", 1, 1, EnumSet.of(Statistic.MEAN), null, null, 1))
        .hasMessageContaining("feature x: bounds must be finite with lo < hi");
    assertThatThrownBy(
            () ->
                new Feature(
                    "x", 0, 1, EnumSet.of(Statistic.HISTOGRAM), new double[] {0, 0.5}, null, 1))
        .hasMessageContaining("binEdges must start at the lower bound 0.0 and end at the upper");
    assertThatThrownBy(
            () ->
                new Feature(
                    "x",
                    0,
                    1,
                    EnumSet.of(Statistic.HISTOGRAM),
                    new double[] {0, 0.5, 0.5, 1},
                    null,
                    1))
        .hasMessageContaining("increase strictly");
    assertThatThrownBy(
            () ->
                new Feature(
                    "x",
                    0,
                    1,
                    EnumSet.of(Statistic.QUANTILES),
                    new double[] {0, 1},
                    new double[] {1},
                    1))
        .hasMessageContaining("quantile levels must be in (0, 1)");
    assertThatThrownBy(
            () -> new Feature("x", 0, 1, EnumSet.of(Statistic.MEAN), new double[] {0, 1}, null, 1))
        .hasMessageContaining("binEdges are read only with the histogram or quantiles");
    assertThatThrownBy(() -> new Feature("x", 0, 1, Set.of(), null, null, 1))
        .hasMessageContaining("statistics must name at least one");
    assertThatThrownBy(
            () -> new Feature("x", 0, 1e-101, EnumSet.of(Statistic.VARIANCE), null, null, 1))
        .hasMessageContaining("at least 2e-100 apart");
    assertThatThrownBy(() -> new Feature("x", 0, 2e100, EnumSet.of(Statistic.MEAN), null, null, 1))
        .hasMessageContaining("within +-1e100");
    assertThatThrownBy(() -> new StatisticsQuery(0, List.of(income()), null))
        .hasMessageContaining("maxRows must be in [1, 1048576]");
    assertThatThrownBy(() -> new StatisticsQuery(1, List.of(income(), income()), null))
        .hasMessageContaining("feature income is listed twice");
    assertThatThrownBy(() -> Statistic.parse("median"))
        .hasMessageContaining(
            "a statistic must be one of [sum, mean, variance, stddev, histogram, quantiles]");
  }
}
