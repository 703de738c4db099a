package dev.privagg.statistics;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a statistics job asks of each client: at most {@code maxRows} rows of the named features,
 * values clipped to each feature's bounds. Everything it releases is one vector of bounded sums
 * (the {@link #blocks()}); the budget is split over them by weights, so that block b's noise has
 * std z Delta_b / sqrt(share_b) with share_b = its weight over the total. The whole vector is one
 * Gaussian mechanism of noise multiplier z on a sum of sensitivity 1 (clip norm 1), which the
 * ledger charges; a block alone is the Gaussian of multiplier z / sqrt(share_b).
 *
 * @param weights relative weights of the count, sum, sumOfSquares and histogram blocks (a feature's
 *     block weight is its kind's weight times the feature's weight)
 */
public record StatisticsQuery(int maxRows, List<Feature> features, KindWeights weights)
    implements java.io.Serializable {

  /** Most rows one client may contribute. */
  public static final int MAX_ROWS = 1 << 20;

  /** Most features one query may name. */
  public static final int MAX_FEATURES = 4096;

  /** The budget weights of the four kinds of bounded sums, each in (0, 1e6]. */
  public record KindWeights(double count, double sum, double sumOfSquares, double histogram)
      implements java.io.Serializable {
    /** Equal weights. */
    public static final KindWeights EQUAL = new KindWeights(1, 1, 1, 1);

    /** Checks each weight. */
    public KindWeights {
      check("count", count);
      check("sum", sum);
      check("sumOfSquares", sumOfSquares);
      check("histogram", histogram);
    }

    private static void check(String name, double w) {
      if (!(w > 0 && w <= 1e6)) {
        throw new IllegalArgumentException(
            "budget weight " + name + " must be in (0, 1e6], was " + w);
      }
    }

    double of(Block.Kind kind) {
      return switch (kind) {
        case COUNT -> count;
        case SUM -> sum;
        case SUM_OF_SQUARES -> sumOfSquares;
        case HISTOGRAM -> histogram;
      };
    }
  }

  /** Validates the row cap and the features. */
  public StatisticsQuery {
    if (maxRows < 1 || maxRows > MAX_ROWS) {
      throw new IllegalArgumentException(
          "maxRows must be in [1, " + MAX_ROWS + "] (rows one client contributes), was " + maxRows);
    }
    if (features == null || features.isEmpty() || features.size() > MAX_FEATURES) {
      throw new IllegalArgumentException(
          "features must list 1 to "
              + MAX_FEATURES
              + " features, was "
              + (features == null ? 0 : features.size()));
    }
    features = List.copyOf(features);
    Set<String> names = new HashSet<>();
    for (Feature f : features) {
      if (!names.add(f.name())) {
        throw new IllegalArgumentException("feature " + f.name() + " is listed twice");
      }
    }
    if (weights == null) {
      weights = KindWeights.EQUAL;
    }
  }

  /**
   * The released blocks in order: the row count, then per feature its centred sum, centred sum of
   * squares and histogram (those its statistics need). Sensitivities: count R, sum R h, sum of
   * squares R h^2 / 2, histogram R (all of a client's rows in one bin).
   */
  public List<Block> blocks() {
    record Raw(String name, Block.Kind kind, int feature, int size, double sensitivity, double w) {}
    List<Raw> raw = new ArrayList<>();
    raw.add(new Raw("count", Block.Kind.COUNT, -1, 1, maxRows, weights.count()));
    for (int i = 0; i < features.size(); i++) {
      Feature f = features.get(i);
      double h = f.halfWidth();
      if (f.hasSum()) {
        raw.add(
            new Raw(
                f.name() + ".sum", Block.Kind.SUM, i, 1, maxRows * h, weights.sum() * f.weight()));
      }
      if (f.hasSumOfSquares()) {
        raw.add(
            new Raw(
                f.name() + ".sumOfSquares",
                Block.Kind.SUM_OF_SQUARES,
                i,
                1,
                maxRows * h * h / 2,
                weights.sumOfSquares() * f.weight()));
      }
      if (f.hasHistogram()) {
        raw.add(
            new Raw(
                f.name() + ".histogram",
                Block.Kind.HISTOGRAM,
                i,
                f.bins(),
                maxRows,
                weights.histogram() * f.weight()));
      }
    }
    double total = raw.stream().mapToDouble(Raw::w).sum();
    List<Block> blocks = new ArrayList<>();
    for (Raw r : raw) {
      blocks.add(
          new Block(r.name(), r.kind(), r.feature(), r.size(), r.sensitivity(), r.w() / total));
    }
    return List.copyOf(blocks);
  }

  /** The released vector's length. */
  public int dimension() {
    return blocks().stream().mapToInt(Block::size).sum();
  }
}
