package dev.privagg.statistics;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The statistics of one release, computed from the job's noisy average of the scaled blocks: all
 * post-processing of the private release, so none of it costs privacy. Block b's noisy sum in the
 * data's units is average * m / w_b with noise std z / w_b. Ratios divide by max(noisy count, 1).
 *
 * <ul>
 *   <li>sum of values: S + mid n, std sqrt(sd_S^2 + mid^2 sd_n^2);
 *   <li>mean: mid + S / n, clamped to the bounds; delta-method std sqrt(sd_S^2 / n^2 + S^2 sd_n^2 /
 *       n^4);
 *   <li>variance: Q / n + h^2 / 2 - (S / n)^2 (Q the centred, shifted sum of squares), clamped to
 *       [0, h^2]; delta-method std over the three independent noises;
 *   <li>histogram: the noisy counts; quantiles: linear within the bin where the cumulative
 *       histogram (negative counts as 0) reaches the level, 95% interval from 1,000 bootstrap
 *       redraws of the histogram noise (fixed seed, so the same release gives the same interval).
 * </ul>
 *
 * @param expectedClients m, the data-independent denominator the job divided the sum by
 */
public record StatisticsEstimates(
    long round,
    double noiseMultiplier,
    int expectedClients,
    Estimate count,
    List<FeatureEstimates> features) {

  private static final int BOOTSTRAP_DRAWS = 1000;

  /**
   * Reads a release: {@code averages} are the job's released values of the query's blocks in order
   * (noisy sums over m), released with noise multiplier {@code noiseMultiplier} at clip norm 1.
   */
  public static StatisticsEstimates of(
      StatisticsQuery query,
      long round,
      float[] averages,
      int expectedClients,
      double noiseMultiplier) {
    if (expectedClients < 1) {
      throw new IllegalArgumentException("expectedClients must be >= 1, was " + expectedClients);
    }
    if (!(noiseMultiplier >= 0 && Double.isFinite(noiseMultiplier))) {
      throw new IllegalArgumentException(
          "noiseMultiplier must be >= 0 and finite, was " + noiseMultiplier);
    }
    List<Block> blocks = query.blocks();
    int dimension = blocks.stream().mapToInt(Block::size).sum();
    if (averages.length != dimension) {
      throw new IllegalArgumentException(
          "the query's blocks hold " + dimension + " values, the release " + averages.length);
    }
    double[][] sums = new double[blocks.size()][];
    double[] stds = new double[blocks.size()];
    int offset = 0;
    for (int b = 0; b < blocks.size(); b++) {
      Block block = blocks.get(b);
      double w = block.scale();
      sums[b] = new double[block.size()];
      for (int j = 0; j < block.size(); j++) {
        sums[b][j] = (double) averages[offset + j] * expectedClients / w;
      }
      stds[b] = block.noiseStd(noiseMultiplier);
      offset += block.size();
    }
    Estimate count = new Estimate(sums[0][0], stds[0]);
    List<FeatureEstimates> out = new ArrayList<>();
    for (int i = 0; i < query.features().size(); i++) {
      out.add(feature(query.features().get(i), i, blocks, sums, stds, count));
    }
    return new StatisticsEstimates(
        round, noiseMultiplier, expectedClients, count, List.copyOf(out));
  }

  private static FeatureEstimates feature(
      Feature f, int index, List<Block> blocks, double[][] sums, double[] stds, Estimate count) {
    double n = Math.max(count.value(), 1);
    double sdN = count.std();
    double mid = f.midpoint();
    double h = f.halfWidth();
    Estimate sum = null;
    Estimate mean = null;
    Estimate variance = null;
    Estimate stddev = null;
    List<Estimate> histogram = null;
    List<QuantileEstimate> quantiles = List.of();
    int sumBlock = blockOf(blocks, index, Block.Kind.SUM);
    if (sumBlock >= 0) {
      double s = sums[sumBlock][0];
      double sdS = stds[sumBlock];
      if (f.statistics().contains(Statistic.SUM)) {
        sum = new Estimate(s + mid * count.value(), Math.hypot(sdS, mid * sdN));
      }
      if (f.statistics().contains(Statistic.MEAN)) {
        double value = f.clip(mid + s / n);
        mean = new Estimate(value, Math.sqrt(sq(sdS / n) + sq(s * sdN / (n * n))));
      }
      int squaresBlock = blockOf(blocks, index, Block.Kind.SUM_OF_SQUARES);
      if (squaresBlock >= 0) {
        double q = sums[squaresBlock][0];
        double sdQ = stds[squaresBlock];
        double raw = q / n + h * h / 2 - sq(s / n);
        double v = Math.max(0, Math.min(h * h, raw));
        // The delta method in units of h^2 (q / h^2, s / h), so that wide bounds cannot overflow.
        double qh = q / (h * h);
        double sh = s / h;
        double dN = -qh / (n * n) + 2 * sh * sh / (n * n * n);
        double sdV =
            h
                * h
                * Math.sqrt(
                    sq(sdQ / (h * h) / n) + sq(2 * sh * (sdS / h) / (n * n)) + sq(dN * sdN));
        if (f.statistics().contains(Statistic.VARIANCE)) {
          variance = new Estimate(v, sdV);
        }
        if (f.statistics().contains(Statistic.STDDEV)) {
          double sd = Math.sqrt(v);
          double sdSd = sd > 0 ? Math.min(h, sdV / (2 * sd)) : Math.min(h, Math.sqrt(sdV));
          stddev = new Estimate(sd, sdSd);
        }
      }
    }
    int histogramBlock = blockOf(blocks, index, Block.Kind.HISTOGRAM);
    if (histogramBlock >= 0) {
      double[] counts = sums[histogramBlock];
      double sdH = stds[histogramBlock];
      if (f.statistics().contains(Statistic.HISTOGRAM)) {
        List<Estimate> bins = new ArrayList<>();
        for (double c : counts) {
          bins.add(new Estimate(c, sdH));
        }
        histogram = List.copyOf(bins);
      }
      if (f.statistics().contains(Statistic.QUANTILES)) {
        quantiles = quantiles(f, counts, sdH);
      }
    }
    return new FeatureEstimates(
        f.name(), sum, mean, variance, stddev, histogram, f.binEdges(), quantiles);
  }

  private static List<QuantileEstimate> quantiles(Feature f, double[] counts, double sdH) {
    double[] edges = f.binEdges();
    double[] levels = f.quantileLevels();
    double[][] draws = new double[levels.length][BOOTSTRAP_DRAWS];
    SplittableRandom random = new SplittableRandom(0x5eed_57a7L);
    double[] redrawn = new double[counts.length];
    for (int d = 0; d < BOOTSTRAP_DRAWS; d++) {
      for (int j = 0; j < counts.length; j++) {
        redrawn[j] = counts[j] + sdH * random.nextGaussian();
      }
      for (int l = 0; l < levels.length; l++) {
        draws[l][d] = quantile(redrawn, edges, levels[l]);
      }
    }
    List<QuantileEstimate> out = new ArrayList<>();
    for (int l = 0; l < levels.length; l++) {
      double[] sorted = draws[l].clone();
      Arrays.sort(sorted);
      out.add(
          new QuantileEstimate(
              levels[l],
              quantile(counts, edges, levels[l]),
              sorted[(int) (0.025 * BOOTSTRAP_DRAWS)],
              sorted[(int) Math.ceil(0.975 * BOOTSTRAP_DRAWS) - 1]));
    }
    return List.copyOf(out);
  }

  /**
   * The level-quantile of a histogram with these edges: negative counts read as 0, linear within
   * the bin where the cumulative count reaches level * total; the midpoint of the range when no
   * count is positive.
   */
  static double quantile(double[] counts, double[] edges, double level) {
    double total = 0;
    for (double c : counts) {
      total += Math.max(0, c);
    }
    if (!(total > 0)) {
      return edges[0] + (edges[edges.length - 1] - edges[0]) / 2;
    }
    double target = level * total;
    double cumulative = 0;
    for (int j = 0; j < counts.length; j++) {
      double c = Math.max(0, counts[j]);
      if (c > 0 && cumulative + c >= target) {
        return edges[j] + (target - cumulative) / c * (edges[j + 1] - edges[j]);
      }
      cumulative += c;
    }
    return edges[edges.length - 1];
  }

  private static int blockOf(List<Block> blocks, int feature, Block.Kind kind) {
    for (int b = 0; b < blocks.size(); b++) {
      if (blocks.get(b).feature() == feature && blocks.get(b).kind() == kind) {
        return b;
      }
    }
    return -1;
  }

  private static double sq(double x) {
    return x * x;
  }
}
