package dev.privagg.sim;

import dev.privagg.client.data.Dataset;
import dev.privagg.client.data.Datasets;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.NoisePlanner;
import dev.privagg.statistics.ClientStatistics;
import dev.privagg.statistics.Estimate;
import dev.privagg.statistics.Feature;
import dev.privagg.statistics.FeatureEstimates;
import dev.privagg.statistics.Statistic;
import dev.privagg.statistics.StatisticsEstimates;
import dev.privagg.statistics.StatisticsQuery;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.ToDoubleFunction;

/**
 * How far DP statistics land from the truth on real data: a dataset's rows split IID over N
 * clients, each client's rows encoded as a statistics job's clients encode them, summed, noised
 * with N(0, z^2) per coordinate for one release at (epsilon, delta) (z planned as a job plans it)
 * and read back as the job's release states it. Beside it the same query in central DP on the
 * pooled rows (each row its own unit, maxRows 1) and what NVIDIA FLARE's statistics filters release
 * for the same split ({@link FlareFilters}): exact, without noise or epsilon, with every client's
 * count but only the sums and histograms its cleansers let through.
 */
public final class StatisticsEvaluation {
  private StatisticsEvaluation() {}

  /** One statistic's relative error, mean and std over seeds. */
  public record Row(
      String dataset,
      int clients,
      int rowsPerClient,
      double epsilon,
      double noiseMultiplier,
      String feature,
      String statistic,
      double truth,
      double federatedError,
      double federatedErrorStd,
      double centralError,
      double flareError,
      double statedStd) {
    /** Whether FLARE's filters dropped this statistic at every client of the split. */
    public boolean flareSuppressed() {
      return Double.isNaN(flareError);
    }
  }

  /** A dataset's rows and the public bounds of its features. */
  record Data(String name, double[][] rows, List<Feature> features) {}

  private static final double[] LEVELS = {0.25, 0.5, 0.75};

  private static Feature feature(String name, double lo, double hi) {
    double[] edges = new double[11];
    for (int j = 0; j <= 10; j++) {
      edges[j] = j == 10 ? hi : lo + (hi - lo) * j / 10;
    }
    return new Feature(
        name,
        lo,
        hi,
        EnumSet.of(Statistic.MEAN, Statistic.STDDEV, Statistic.HISTOGRAM, Statistic.QUANTILES),
        edges,
        LEVELS,
        1);
  }

  /**
   * Breast Cancer Wisconsin (all 569 patients): mean radius, texture and area, with bounds from the
   * feature's definition rather than the data; Fashion-MNIST (the 60,000 training images): an
   * image's mean pixel intensity and its centre pixel, both in [0, 1].
   */
  static Data data(String dataset) {
    return switch (dataset) {
      case "breast-cancer" -> {
        // File order, shuffled once so that the round-robin split is not ordered by anything.
        double[][] all = Datasets.breastCancerRaw().features();
        int[] order = Datasets.permutation(all.length, new SplittableRandom(1));
        double[][] rows = new double[all.length][];
        for (int i = 0; i < all.length; i++) {
          double[] x = all[order[i]];
          rows[i] = new double[] {x[0], x[1], x[3]};
        }
        yield new Data(
            dataset,
            rows,
            List.of(feature("radius", 0, 30), feature("texture", 0, 40), feature("area", 0, 2600)));
      }
      case "fashion-mnist" -> {
        Dataset train = Datasets.load("fashion-mnist", 0).train();
        double[][] rows = new double[train.size()][];
        for (int i = 0; i < rows.length; i++) {
          double[] pixels = train.features()[i];
          rows[i] = new double[] {Arrays.stream(pixels).average().orElse(0), pixels[14 * 28 + 14]};
        }
        yield new Data(dataset, rows, List.of(feature("intensity", 0, 1), feature("centre", 0, 1)));
      }
      default ->
          throw new IllegalArgumentException(
              "--dataset must be breast-cancer or fashion-mnist, was '" + dataset + "'");
    };
  }

  /**
   * Every (clients, epsilon) setting, {@code seeds} noise draws each; {@code progress} gets a line
   * per setting.
   */
  public static List<Row> run(
      String dataset,
      int[] clientCounts,
      double[] epsilons,
      double delta,
      int seeds,
      Consumer<String> progress) {
    Data data = data(dataset);
    List<Row> out = new ArrayList<>();
    for (int clients : clientCounts) {
      if (clients < 1 || clients > data.rows().length) {
        throw new IllegalArgumentException(
            "--clients must be in [1, "
                + data.rows().length
                + "] for "
                + dataset
                + ", was "
                + clients);
      }
      int perClient = (data.rows().length + clients - 1) / clients;
      StatisticsQuery federated = new StatisticsQuery(perClient, data.features(), null);
      StatisticsQuery central = new StatisticsQuery(1, data.features(), null);
      double[][][] split = split(data.rows(), clients);
      double[] federatedSum = scaledSum(federated, split);
      double[] centralSum = scaledSum(central, split(data.rows(), data.rows().length));
      StatisticsEstimates truth = exact(central, data.rows());
      FlareRelease flare = FlareRelease.of(central, split);
      for (double epsilon : epsilons) {
        double z =
            new NoisePlanner(Accountant.named("pld"))
                .plan(epsilon, delta, 1, 1.0)
                .noiseMultiplier();
        List<StatisticsEstimates> fed = new ArrayList<>();
        List<StatisticsEstimates> cen = new ArrayList<>();
        for (int seed = 1; seed <= seeds; seed++) {
          SplittableRandom random = new SplittableRandom(seed * 1_000_003L + clients);
          fed.add(
              StatisticsEstimates.of(
                  federated, seed, release(federatedSum, z, clients, random), clients, z));
          cen.add(
              StatisticsEstimates.of(
                  central,
                  seed,
                  release(centralSum, z, data.rows().length, random),
                  data.rows().length,
                  z));
        }
        out.addAll(rows(new Draws(data, clients, perClient, epsilon, z, fed, cen, flare), truth));
        progress.accept(
            String.format(
                "%s: %d clients of %d rows, epsilon %s (z %.4g): %d seeds",
                dataset, clients, perClient, epsilon, z, seeds));
      }
    }
    return out;
  }

  /** The rows dealt round-robin into {@code clients} clients (rows are in a shuffled order). */
  private static double[][][] split(double[][] rows, int clients) {
    List<List<double[]>> held = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      held.add(new ArrayList<>());
    }
    for (int i = 0; i < rows.length; i++) {
      held.get(i % clients).add(rows[i]);
    }
    return held.stream().map(l -> l.toArray(double[][]::new)).toArray(double[][][]::new);
  }

  /** The job's exact sum of every client's scaled blocks. */
  private static double[] scaledSum(StatisticsQuery query, double[][][] clients) {
    double[] sum = new double[query.dimension()];
    for (double[][] rows : clients) {
      int offset = 0;
      for (float[] block : ClientStatistics.encode(query, rows)) {
        for (int j = 0; j < block.length; j++) {
          sum[offset + j] += block[j];
        }
        offset += block.length;
      }
    }
    return sum;
  }

  /** The noise-free release of {@code rows} (one row per client), or null for no rows. */
  private static StatisticsEstimates exact(StatisticsQuery central, double[][] rows) {
    if (rows.length == 0) {
      return null;
    }
    double[] sum = scaledSum(central, split(rows, rows.length));
    return StatisticsEstimates.of(central, 0, release(sum, 0, rows.length, null), rows.length, 0);
  }

  /**
   * What FLARE's filters release for a split. Every site's count passes (FLARE's cleanser never
   * drops a count), so the global count is exact; the sums of sites with too few rows are dropped,
   * so FLARE's global mean is the kept rows' sum over every row's count, and its variance the kept
   * rows' squared deviations from that mean over the same count (FLARE divides by count - 1, the
   * truth here by count: dividing by count keeps what the cleansers drop the only difference). Per
   * feature, the exact histogram of the sites whose rows also allow its bins (null when none do).
   * Values are clipped into the bounds, as the truth's are.
   */
  private record FlareRelease(
      int allRows, double[][] keptRows, List<StatisticsEstimates> histograms) {
    static FlareRelease of(StatisticsQuery central, double[][][] clients) {
      FlareFilters filters = FlareFilters.EXAMPLES;
      double[][] kept =
          Arrays.stream(clients)
              .filter(c -> filters.releases(c.length))
              .flatMap(Arrays::stream)
              .map(row -> clipped(central, row))
              .toArray(double[][]::new);
      List<StatisticsEstimates> histograms = new ArrayList<>();
      for (Feature f : central.features()) {
        int bins = f.binEdges().length - 1;
        histograms.add(
            exact(
                central,
                Arrays.stream(clients)
                    .filter(c -> filters.releasesHistogram(c.length, bins))
                    .flatMap(Arrays::stream)
                    .toArray(double[][]::new)));
      }
      int all = Arrays.stream(clients).mapToInt(c -> c.length).sum();
      return new FlareRelease(all, kept, histograms);
    }

    private static double[] clipped(StatisticsQuery query, double[] row) {
      double[] out = new double[row.length];
      for (int i = 0; i < row.length; i++) {
        out[i] = query.features().get(i).clip(row[i]);
      }
      return out;
    }

    /** FLARE's mean of feature {@code i}; NaN when no site's sums pass. */
    double mean(int i) {
      return keptRows.length == 0
          ? Double.NaN
          : Arrays.stream(keptRows).mapToDouble(r -> r[i]).sum() / allRows;
    }

    /** FLARE's stddev of feature {@code i} (over the count, see above); NaN as the mean. */
    double stddev(int i) {
      double mean = mean(i);
      if (Double.isNaN(mean)) {
        return Double.NaN;
      }
      return Math.sqrt(
          Arrays.stream(keptRows).mapToDouble(r -> (r[i] - mean) * (r[i] - mean)).sum() / allRows);
    }
  }

  /** What the job releases: (sum + N(0, z^2)) / m, in float. */
  private static float[] release(double[] sum, double z, int m, SplittableRandom random) {
    float[] out = new float[sum.length];
    for (int i = 0; i < sum.length; i++) {
      out[i] = (float) ((sum[i] + (z == 0 ? 0 : z * random.nextGaussian())) / m);
    }
    return out;
  }

  /** One setting's noise draws, federated and central, and how to score them against the truth. */
  private record Draws(
      Data data,
      int clients,
      int perClient,
      double epsilon,
      double z,
      List<StatisticsEstimates> fed,
      List<StatisticsEstimates> cen,
      FlareRelease flare) {

    /** |read - truth| / |truth| per draw, and of FLARE's value (NaN: suppressed). */
    Row relative(
        String feature,
        String statistic,
        double truth,
        ToDoubleFunction<StatisticsEstimates> read,
        double statedStd,
        double flareValue) {
      return row(
          feature,
          statistic,
          truth,
          e -> Math.abs(read.applyAsDouble(e) - truth) / Math.abs(truth),
          statedStd / Math.abs(truth),
          Math.abs(flareValue - truth) / Math.abs(truth));
    }

    /**
     * The mean and std over draws of {@code error}, the central draws' mean and FLARE's error (NaN:
     * suppressed) beside them.
     */
    Row row(
        String feature,
        String statistic,
        double truth,
        ToDoubleFunction<StatisticsEstimates> error,
        double statedRelativeStd,
        double flareError) {
      double[] f = fed.stream().mapToDouble(error).toArray();
      double mean = Arrays.stream(f).average().orElse(Double.NaN);
      double sd =
          Math.sqrt(
              Arrays.stream(f).map(x -> (x - mean) * (x - mean)).sum() / Math.max(1, f.length - 1));
      return new Row(
          data.name(),
          clients,
          perClient,
          epsilon,
          z,
          feature,
          statistic,
          truth,
          mean,
          sd,
          cen.stream().mapToDouble(error).average().orElse(Double.NaN),
          flareError,
          statedRelativeStd);
    }
  }

  private static List<Row> rows(Draws d, StatisticsEstimates truth) {
    List<Row> out = new ArrayList<>();
    double n = d.data().rows().length; // truth's own count went through float: within 1e-7 of it
    StatisticsEstimates first = d.fed().get(0);
    FlareRelease flare = d.flare();
    // FLARE releases every site's count, exactly.
    out.add(
        d.row(
            "",
            "count",
            n,
            e -> Math.abs(e.count().value() - n) / n,
            first.count().std() / n,
            Math.abs(flare.allRows() - n) / n));
    for (int f = 0; f < d.data().features().size(); f++) {
      final int i = f;
      FeatureEstimates t = truth.features().get(i);
      FeatureEstimates stated = first.features().get(i);
      out.add(
          d.relative(
              t.name(),
              "mean",
              t.mean().value(),
              e -> e.features().get(i).mean().value(),
              stated.mean().std(),
              flare.mean(i)));
      out.add(
          d.relative(
              t.name(),
              "stddev",
              t.stddev().value(),
              e -> e.features().get(i).stddev().value(),
              stated.stddev().std(),
              flare.stddev(i)));
      double median = median(d.data().rows(), i);
      ToDoubleFunction<StatisticsEstimates> medianError =
          e -> Math.abs(e.features().get(i).quantiles().get(1).value() - median) / median;
      // FLARE's median is its digest's, nearly exact: the kept clients' own median stands for it.
      out.add(
          d.row(
              t.name(),
              "median (10 bins)",
              median,
              medianError,
              Double.NaN,
              flare.keptRows().length == 0
                  ? Double.NaN
                  : Math.abs(median(flare.keptRows(), i) - median) / median));
      double[] bins = t.histogram().stream().mapToDouble(Estimate::value).toArray();
      ToDoubleFunction<StatisticsEstimates> histogramError = e -> l1(e.features().get(i), bins) / n;
      StatisticsEstimates flareHistogram = flare.histograms().get(i);
      out.add(
          d.row(
              t.name(),
              "histogram (L1 / n)",
              n,
              histogramError,
              stated.histogram().get(0).std() / n,
              flareHistogram == null ? Double.NaN : histogramError.applyAsDouble(flareHistogram)));
    }
    return out;
  }

  /** The data's own median of feature {@code i}: what a histogram's median approximates. */
  private static double median(double[][] rows, int i) {
    double[] values = Arrays.stream(rows).mapToDouble(r -> r[i]).sorted().toArray();
    int n = values.length;
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }

  private static double l1(FeatureEstimates e, double[] truth) {
    double sum = 0;
    for (int j = 0; j < truth.length; j++) {
      sum += Math.abs(e.histogram().get(j).value() - truth[j]);
    }
    return sum;
  }
}
