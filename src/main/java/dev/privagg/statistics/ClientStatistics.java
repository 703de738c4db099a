package dev.privagg.statistics;

import java.util.List;

/**
 * What one client sends for a statistics query: its rows turned into the query's scaled bounded
 * sums, one float array per {@link Block}. The client keeps at most maxRows rows (the first ones),
 * clips every value into its feature's bounds and scales each block by its {@link Block#scale()},
 * so the contribution has L2 norm below 1; the job clips every block again, so nothing here is
 * trusted.
 */
public final class ClientStatistics {
  private ClientStatistics() {}

  /**
   * The scaled blocks for {@code rows}, each row holding one value per feature in the query's
   * order. Rows past maxRows are left out. A NaN value, or a row of the wrong length, is refused
   * naming the row and feature; infinite values clip to the bounds.
   */
  public static float[][] encode(StatisticsQuery query, double[][] rows) {
    List<Feature> features = query.features();
    int used = Math.min(rows.length, query.maxRows());
    for (int r = 0; r < used; r++) {
      if (rows[r] == null || rows[r].length != features.size()) {
        throw new IllegalArgumentException(
            "row "
                + r
                + " must hold one value per feature "
                + features.stream().map(Feature::name).toList()
                + ", had "
                + (rows[r] == null ? 0 : rows[r].length));
      }
      for (int i = 0; i < features.size(); i++) {
        if (Double.isNaN(rows[r][i])) {
          throw new IllegalArgumentException(
              "row " + r + ", feature " + features.get(i).name() + ": value is NaN");
        }
      }
    }
    List<Block> blocks = query.blocks();
    float[][] out = new float[blocks.size()][];
    for (int b = 0; b < blocks.size(); b++) {
      Block block = blocks.get(b);
      double[] sums = new double[block.size()];
      if (block.kind() == Block.Kind.COUNT) {
        sums[0] = used;
      } else {
        Feature f = features.get(block.feature());
        double mid = f.midpoint();
        double h = f.halfWidth();
        for (int r = 0; r < used; r++) {
          double x = f.clip(rows[r][block.feature()]);
          switch (block.kind()) {
            case SUM -> sums[0] += centred(x, mid, h);
            case SUM_OF_SQUARES -> {
              double c = centred(x, mid, h);
              sums[0] += c * c - h * h / 2;
            }
            case HISTOGRAM -> sums[f.bin(x)] += 1;
            default -> throw new IllegalStateException("unexpected block " + block.kind());
          }
        }
      }
      double w = block.scale();
      out[b] = new float[sums.length];
      for (int j = 0; j < sums.length; j++) {
        out[b][j] = (float) (sums[j] * w);
      }
    }
    return out;
  }

  /** x - midpoint, kept within [-h, h] where rounding could step past it. */
  private static double centred(double clipped, double mid, double h) {
    return Math.max(-h, Math.min(h, clipped - mid));
  }
}
