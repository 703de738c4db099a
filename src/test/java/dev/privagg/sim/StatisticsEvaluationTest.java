package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatisticsEvaluationTest {
  private static StatisticsEvaluation.Row find(
      List<StatisticsEvaluation.Row> rows,
      int clients,
      double epsilon,
      String feature,
      String stat) {
    return rows.stream()
        .filter(r -> r.clients() == clients && r.epsilon() == epsilon)
        .filter(r -> r.feature().equals(feature) && r.statistic().equals(stat))
        .findFirst()
        .orElseThrow();
  }

  /**
   * Breast Cancer's 569 patients: one row per client is the central query itself, so their errors
   * agree; 30 rows per client scale the count's noise by 30; more epsilon, less error. The mean of
   * 200 seeds' relative error of a Gaussian count is sqrt(2 / pi) std / n, within 15% (about 3
   * standard errors of that mean).
   */
  @Test
  void oneRowPerClient_isTheCentralRelease_andMoreRowsPerClientCostNoise() {
    List<StatisticsEvaluation.Row> rows =
        StatisticsEvaluation.run(
            "breast-cancer", new int[] {569, 19}, new double[] {1, 4}, 1e-5, 200, line -> {});
    StatisticsEvaluation.Row single = find(rows, 569, 1, "", "count");
    assertThat(single.truth()).isEqualTo(569);
    assertThat(single.rowsPerClient()).isEqualTo(1);
    double expected = Math.sqrt(2 / Math.PI) * single.statedStd();
    assertThat(single.federatedError()).isCloseTo(expected, within(0.15 * expected));
    assertThat(single.centralError()).isCloseTo(expected, within(0.15 * expected));
    StatisticsEvaluation.Row thirty = find(rows, 19, 1, "", "count");
    assertThat(thirty.rowsPerClient()).isEqualTo(30);
    assertThat(thirty.statedStd()).isCloseTo(30 * single.statedStd(), within(1e-9));
    assertThat(find(rows, 569, 4, "radius", "mean").federatedError())
        .isLessThan(find(rows, 569, 1, "radius", "mean").federatedError());
    assertThat(find(rows, 569, 1, "radius", "mean").truth()).isCloseTo(14.127, within(1e-3));
  }

  /**
   * FLARE's filters on Breast Cancer's 569 patients. Counts always pass, so every count is exact.
   * One patient per client releases no sum, mean or histogram. 57 clients hold 10 rows each but one
   * holds 9, whose sums are dropped while its count stays: the mean falls about 9/569 short; no
   * client has rows enough for 10 bins. 5 clients of 113 or 114 rows release everything, exactly
   * (up to the truth's float32 release).
   */
  @Test
  void flareFilters_keepEveryCount_dropSmallClientsSums_andReleaseTheRestExactly() {
    List<StatisticsEvaluation.Row> rows =
        StatisticsEvaluation.run(
            "breast-cancer", new int[] {569, 57, 5}, new double[] {1}, 1e-5, 2, line -> {});
    assertThat(rows.stream().filter(r -> r.statistic().equals("count")))
        .hasSize(3)
        .allSatisfy(r -> assertThat(r.flareError()).isCloseTo(0, within(1e-6)));
    assertThat(rows.stream().filter(r -> r.clients() == 569 && !r.statistic().equals("count")))
        .isNotEmpty()
        .allMatch(StatisticsEvaluation.Row::flareSuppressed);
    assertThat(find(rows, 57, 1, "radius", "mean").flareError())
        .isCloseTo(9.0 / 569, within(0.003));
    assertThat(find(rows, 57, 1, "radius", "histogram (L1 / n)").flareSuppressed()).isTrue();
    assertThat(rows.stream().filter(r -> r.clients() == 5))
        .isNotEmpty()
        .allSatisfy(r -> assertThat(r.flareError()).as(r.toString()).isCloseTo(0, within(1e-5)));
  }
}
