package dev.privagg.job.ledger;

import dev.privagg.avro.StatisticsRelease;
import dev.privagg.spec.JobSpec;
import dev.privagg.statistics.Block;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A statistics query as a release states it and as a spec asks for it, in one text, so that a start
 * can tell whether they are the same: the row cap, every feature's bounds and bin edges, and every
 * block's name, sensitivity and share.
 */
final class StatisticsQueries {
  private StatisticsQueries() {}

  /** What a released model states: "model training" when it carries no statistics. */
  static String describe(StatisticsRelease released) {
    if (released == null) {
      return "model training";
    }
    return describe(
        released.getMaxRows(),
        released.getFeatures().stream()
            .map(f -> feature(f.getName(), f.getLo(), f.getHi(), f.getBinEdges()))
            .toList(),
        released.getBlocks().stream()
            .map(b -> block(b.getName(), b.getSensitivity(), b.getShare()))
            .toList());
  }

  /** What {@code spec} asks for. */
  static String describe(JobSpec spec) {
    if (!spec.statisticsJob()) {
      return "model training";
    }
    List<Block> blocks = spec.statistics().blocks();
    return describe(
        spec.statistics().maxRows(),
        spec.statistics().features().stream()
            .map(
                f ->
                    feature(
                        f.name(),
                        f.lo(),
                        f.hi(),
                        java.util.Arrays.stream(f.binEdges()).boxed().toList()))
            .toList(),
        blocks.stream().map(b -> block(b.name(), b.sensitivity(), b.share())).toList());
  }

  private static String describe(int maxRows, List<String> features, List<String> blocks) {
    return "statistics (maxRows "
        + maxRows
        + "; "
        + String.join(", ", features)
        + "; "
        + blocks.stream().collect(Collectors.joining(", "))
        + ")";
  }

  private static String feature(String name, double lo, double hi, List<Double> edges) {
    return name + " in [" + lo + ", " + hi + "]" + (edges.isEmpty() ? "" : " bins " + edges);
  }

  private static String block(String name, double sensitivity, double share) {
    return name + " sensitivity " + sensitivity + " share " + share;
  }
}
