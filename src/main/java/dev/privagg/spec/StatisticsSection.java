package dev.privagg.spec;

import dev.privagg.statistics.Block;
import dev.privagg.statistics.Feature;
import dev.privagg.statistics.Statistic;
import dev.privagg.statistics.StatisticsQuery;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * {@code statistics}: a job that releases DP statistics of its clients' rows instead of training a
 * model. Its released vector is the query's bounded sums ({@link StatisticsQuery#blocks()}), one
 * tensor per block, so rounds, charges, noise, restores and secure mode work as for a model; the
 * clip norm is 1 by construction (each client scales its blocks into their budget shares).
 */
final class StatisticsSection {
  private StatisticsSection() {}

  static StatisticsQuery read(YamlSection s) {
    long maxRows =
        s.integerIn(
            "maxRows",
            1,
            1,
            StatisticsQuery.MAX_ROWS,
            "rows one client contributes at most (more are left out by the client)");
    List<Feature> features = new ArrayList<>();
    for (YamlSection f :
        s.sections(
            "features",
            "each with a name, bounds [lo, hi] and statistics, e.g. {name: age, bounds: [0, 100],"
                + " statistics: [mean]}")) {
      features.add(feature(f));
    }
    StatisticsQuery.KindWeights weights = StatisticsQuery.KindWeights.EQUAL;
    YamlSection budget = s.optionalSection("budgetWeights");
    if (budget != null) {
      weights =
          new StatisticsQuery.KindWeights(
              weight(budget, "count"),
              weight(budget, "sum"),
              weight(budget, "sumOfSquares"),
              weight(budget, "histogram"));
      budget.finish();
    }
    s.finish();
    StatisticsQuery query;
    long dimension = 0;
    try {
      query = new StatisticsQuery((int) maxRows, features, weights);
      for (Block b : query.blocks()) {
        dimension += b.size();
      }
    } catch (IllegalArgumentException e) {
      throw s.fail("features", e.getMessage());
    }
    if (dimension > JobSpec.MAX_DIMENSION) {
      throw s.fail(
          "features",
          "release "
              + dimension
              + " values, more than "
              + JobSpec.MAX_DIMENSION
              + " (2^27); use fewer bins or features");
    }
    return query;
  }

  private static Feature feature(YamlSection f) {
    String name = f.string("name", "the feature's name, as clients send it");
    double[] bounds = f.numberList("bounds", "the public range [lo, hi] values are clipped to");
    if (bounds.length != 2) {
      throw f.fail("bounds", "must be two numbers [lo, hi], had " + bounds.length);
    }
    Set<Statistic> statistics = EnumSet.noneOf(Statistic.class);
    for (String stat : f.stringList("statistics", "e.g. [mean, stddev, histogram, quantiles]")) {
      try {
        statistics.add(Statistic.parse(stat));
      } catch (IllegalArgumentException e) {
        throw f.fail("statistics", e.getMessage());
      }
    }
    double[] edges =
        f.has("binEdges") ? f.numberList("binEdges", "histogram edges from lo to hi") : null;
    if (edges == null && f.has("bins")) {
      long bins = f.integerIn("bins", 10, 1, Feature.MAX_BINS, "equal-width histogram bins");
      edges = new double[(int) bins + 1];
      for (int j = 0; j <= bins; j++) {
        edges[j] = j == bins ? bounds[1] : bounds[0] + (bounds[1] - bounds[0]) * j / bins;
      }
    } else if (edges != null && f.has("bins")) {
      throw f.fail("bins", "and binEdges are both set: give one of them");
    }
    if (edges == null
        && statistics.stream()
            .anyMatch(x -> x == Statistic.HISTOGRAM || x == Statistic.QUANTILES)) {
      throw f.fail("bins", "or binEdges is needed for a histogram or quantiles, e.g. bins: 20");
    }
    double[] levels =
        f.has("quantiles") ? f.numberList("quantiles", "levels in (0, 1), e.g. [0.5]") : null;
    double weight = f.number("weight", 1.0, "this feature's budget relative to the others");
    f.finish();
    try {
      return new Feature(name, bounds[0], bounds[1], statistics, edges, levels, weight);
    } catch (IllegalArgumentException e) {
      throw f.fail("", e.getMessage());
    }
  }

  private static double weight(YamlSection s, String name) {
    return s.number(name, 1.0, "relative budget weight of the " + name + " blocks");
  }

  /**
   * How a statistics job clips: each block to its budget share (per layer) in plaintext, where the
   * job sees each contribution; flat at 1 under secure aggregation, where clients clip.
   */
  static String clipping(YamlSection spec) {
    YamlSection aggregation = spec.optionalSection("aggregation");
    boolean secure =
        aggregation != null
            && aggregation.has("mode")
            && "secure".equals(aggregation.string("mode", "plaintext or secure"));
    return secure ? "flat" : "per-layer";
  }

  /**
   * A statistics job's rounds are separate queries of one population: noise correlated across
   * rounds (BLT, banded MF) lowers the error of the prefix sums a model trains on, which a
   * statistics job does not release, and adaptive clipping has no place where every block has a
   * fixed bound. Checked before those sections are read, so the refusal says why; the clip norm and
   * its split are the statistics section's.
   */
  static void requireMechanism(YamlSection s) {
    if (s.has("mechanism")) {
      String mechanism = s.string("mechanism", "independent or distributed-discrete-gaussian");
      if (mechanism.equals("blt") || mechanism.equals("bandmf")) {
        throw s.fail(
            "mechanism",
            "must be independent or distributed-discrete-gaussian for a statistics job: each"
                + " round's statistics are released alone, and correlated noise only helps the"
                + " prefix sums a model trains on, was "
                + mechanism);
      }
    }
    for (String key : List.of("clipNorm", "clipping", "layerSplit")) {
      if (s.has(key)) {
        throw s.fail(
            key,
            "is set by the statistics section: each client's contribution has norm at most 1,"
                + " split over the statistics by statistics.budgetWeights; remove it");
      }
    }
    if (s.has("adaptiveClipping")) {
      throw s.fail(
          "adaptiveClipping",
          "is read only for model training: a statistics job's bounds fix each block's clip bound");
    }
  }

  /** The model a statistics job releases: one zero-initialized tensor per block. */
  static JobSpec.Model model(StatisticsQuery query) {
    List<JobSpec.TensorSpec> tensors = new ArrayList<>();
    for (Block b : query.blocks()) {
      tensors.add(new JobSpec.TensorSpec(b.name(), new int[] {b.size()}));
    }
    return new JobSpec.Model(List.copyOf(tensors), "zeros", 0, 0.01, null, null);
  }
}
