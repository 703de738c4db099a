package dev.privagg.statistics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class StatisticsEstimatesTest {
  private static final double[] EDGES = {0, 1, 2, 4, 6, 10};
  private static final Feature X =
      new Feature(
          "x", 0, 10, EnumSet.allOf(Statistic.class), EDGES, new double[] {0.25, 0.5, 0.75}, 1);
  private static final StatisticsQuery QUERY = new StatisticsQuery(4, List.of(X), null);
  private static final int CLIENTS = 300;
  private static final int M = 250;

  /** Clients holding 1 to 6 rows (the cap keeps 4) of values around 3, some out of bounds. */
  private static double[][][] population(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    double[][][] clients = new double[CLIENTS][][];
    for (int c = 0; c < CLIENTS; c++) {
      clients[c] = new double[1 + random.nextInt(6)][1];
      for (double[] row : clients[c]) {
        row[0] = 3 + 2.5 * random.nextGaussian();
      }
    }
    return clients;
  }

  /** The job's sum of the clients' scaled blocks, in double as its exact fixed-point sum. */
  private static double[] scaledSum(double[][][] clients) {
    double[] sum = new double[QUERY.dimension()];
    for (double[][] rows : clients) {
      int offset = 0;
      for (float[] block : ClientStatistics.encode(QUERY, rows)) {
        for (int j = 0; j < block.length; j++) {
          sum[offset + j] += block[j];
        }
        offset += block.length;
      }
    }
    return sum;
  }

  private static float[] release(double[] sum, double z, SplittableRandom random) {
    float[] averages = new float[sum.length];
    for (int i = 0; i < sum.length; i++) {
      averages[i] = (float) ((sum[i] + (z == 0 ? 0 : z * random.nextGaussian())) / M);
    }
    return averages;
  }

  /** The kept rows' clipped values, computed directly. */
  private static double[] kept(double[][][] clients) {
    return Arrays.stream(clients)
        .flatMap(rows -> Arrays.stream(rows).limit(4))
        .mapToDouble(row -> Math.min(10, Math.max(0, row[0])))
        .toArray();
  }

  @Test
  void withoutNoise_theStatisticsAreThoseOfTheKeptClippedRows() {
    double[][][] clients = population(1);
    double[] values = kept(clients);
    StatisticsEstimates e =
        StatisticsEstimates.of(QUERY, 1, release(scaledSum(clients), 0, null), M, 0);
    double n = values.length;
    double mean = Arrays.stream(values).average().orElseThrow();
    double variance = Arrays.stream(values).map(v -> (v - mean) * (v - mean)).sum() / n;
    assertThat(e.count().value()).isCloseTo(n, within(1e-3));
    FeatureEstimates x = e.features().get(0);
    assertThat(x.sum().value()).isCloseTo(Arrays.stream(values).sum(), within(1e-2));
    assertThat(x.mean().value()).isCloseTo(mean, within(1e-5));
    assertThat(x.variance().value()).isCloseTo(variance, within(1e-4));
    assertThat(x.stddev().value()).isCloseTo(Math.sqrt(variance), within(1e-4));
    double[] bins = new double[EDGES.length - 1];
    for (double v : values) {
      int j = 0;
      while (j < bins.length - 1 && v >= EDGES[j + 1]) {
        j++;
      }
      bins[j]++;
    }
    assertThat(x.histogram().stream().mapToDouble(Estimate::value).toArray())
        .containsExactly(bins, within(1e-3));
    assertThat(x.quantiles()).hasSize(3);
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    // The histogram's median lies in the true median's bin.
    double median = x.quantiles().get(1).value();
    double trueMedian = sorted[sorted.length / 2];
    int bin = 0;
    while (EDGES[bin + 1] <= trueMedian) {
      bin++;
    }
    assertThat(median).isBetween(EDGES[bin], EDGES[bin + 1]);
  }

  /**
   * Over 2,000 releases of one population, each block's error has std z Delta / sqrt(share) and the
   * mean's and variance's 95% intervals cover the truth in 93-97% of them. False-failure rate: the
   * std checks (+-6%, about 3.8 standard errors) and the coverage checks (+-2%, 4 standard errors)
   * together below 1e-3.
   */
  @Test
  void withNoise_errorsHaveTheStatedStd_andIntervalsCover() {
    double z = 1.3;
    double[][][] clients = population(2);
    double[] values = kept(clients);
    double n = values.length;
    double mean = Arrays.stream(values).average().orElseThrow();
    double variance = Arrays.stream(values).map(v -> (v - mean) * (v - mean)).sum() / n;
    double[] sum = scaledSum(clients);
    // Shares: count, sum, sum of squares, histogram a quarter each; R = 4, h = 5.
    double countStd = z * 4 / Math.sqrt(0.25) / (1 - 0x1p-19);
    double sumStd = z * 4 * 5 / Math.sqrt(0.25) / (1 - 0x1p-19);
    double binStd = countStd;
    SplittableRandom random = new SplittableRandom(3);
    int trials = 2000;
    double countSq = 0;
    double sumSq = 0;
    double binSq = 0;
    int meanCovered = 0;
    int varianceCovered = 0;
    double trueSum = Arrays.stream(values).sum();
    for (int t = 0; t < trials; t++) {
      StatisticsEstimates e = StatisticsEstimates.of(QUERY, 1, release(sum, z, random), M, z);
      FeatureEstimates x = e.features().get(0);
      assertThat(e.count().std()).isCloseTo(countStd, within(1e-9));
      countSq += Math.pow(e.count().value() - n, 2);
      // The sum of values carries the count's noise times the midpoint 5.
      sumSq += Math.pow(x.sum().value() - trueSum, 2);
      binSq += Math.pow(x.histogram().get(0).value() - countIn(values, 0, 1), 2);
      meanCovered += x.mean().lower() <= mean && mean <= x.mean().upper() ? 1 : 0;
      varianceCovered +=
          x.variance().lower() <= variance && variance <= x.variance().upper() ? 1 : 0;
    }
    assertThat(Math.sqrt(countSq / trials)).isCloseTo(countStd, within(0.06 * countStd));
    double sumOfValuesStd = Math.hypot(sumStd, 5 * countStd);
    assertThat(Math.sqrt(sumSq / trials)).isCloseTo(sumOfValuesStd, within(0.06 * sumOfValuesStd));
    assertThat(Math.sqrt(binSq / trials)).isCloseTo(binStd, within(0.06 * binStd));
    assertThat(meanCovered / (double) trials).isBetween(0.93, 0.97);
    assertThat(varianceCovered / (double) trials).isBetween(0.93, 0.97);
  }

  private static double countIn(double[] values, double lo, double hi) {
    return Arrays.stream(values).filter(v -> v >= lo && v < hi).count();
  }

  /** Bounds as wide as allowed: the variance's error bar stays finite (it is of order h^2). */
  @Test
  void widestBounds_giveFiniteErrorBars() {
    Feature wide =
        new Feature(
            "w", -1e100, 1e100, EnumSet.of(Statistic.VARIANCE, Statistic.STDDEV), null, null, 1);
    StatisticsQuery query = new StatisticsQuery(2, List.of(wide), null);
    double[] sum = new double[query.dimension()];
    int offset = 0;
    for (float[] block : ClientStatistics.encode(query, new double[][] {{3e99}, {-5e99}})) {
      for (int j = 0; j < block.length; j++) {
        sum[offset + j] += block[j];
      }
      offset += block.length;
    }
    FeatureEstimates e =
        StatisticsEstimates.of(query, 1, release(sum, 1, new SplittableRandom(9)), M, 1)
            .features()
            .get(0);
    assertThat(e.variance().std()).isFinite().isPositive();
    assertThat(e.variance().value()).isFinite().isBetween(0.0, 1e200);
    assertThat(e.stddev().std()).isFinite();
  }

  @Test
  void quantile_interpolatesWithinTheBin_andReadsNegativeCountsAsZero() {
    double[] edges = {0, 1, 2, 4};
    assertThat(StatisticsEstimates.quantile(new double[] {1, 2, 1}, edges, 0.5))
        .isCloseTo(1.5, within(1e-12));
    assertThat(StatisticsEstimates.quantile(new double[] {-5, 0, 4}, edges, 0.25))
        .isCloseTo(2.5, within(1e-12));
    assertThat(StatisticsEstimates.quantile(new double[] {-1, -1, -1}, edges, 0.5)).isEqualTo(2);
  }

  @Test
  void quantileIntervals_containTheEstimate_andWidenWithNoise() {
    double[][][] clients = population(4);
    double[] sum = scaledSum(clients);
    SplittableRandom random = new SplittableRandom(5);
    QuantileEstimate small =
        StatisticsEstimates.of(QUERY, 1, release(sum, 0.5, random), M, 0.5)
            .features()
            .get(0)
            .quantiles()
            .get(1);
    QuantileEstimate large =
        StatisticsEstimates.of(QUERY, 1, release(sum, 20, random), M, 20)
            .features()
            .get(0)
            .quantiles()
            .get(1);
    assertThat(small.value()).isBetween(small.lower(), small.upper());
    assertThat(large.upper() - large.lower()).isGreaterThan(small.upper() - small.lower());
  }
}
