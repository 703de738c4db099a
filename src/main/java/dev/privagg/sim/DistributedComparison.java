package dev.privagg.sim;

import dev.privagg.spec.JobSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Distributed noise against central noise at one target epsilon, the same clients, rounds and
 * seeds, run as {@link SecureReplica}s: {@code central} (plaintext aggregation, the server noises
 * the exact sum), {@code secure-central} (secure aggregation behind the same gate, the server
 * noises the unmasked sum) and {@code distributed-B} for each word size B (the clients' shares,
 * sized for the fewest honest inputs the gate lets through).
 */
public final class DistributedComparison {
  private DistributedComparison() {}

  /** The reference every other variant's accuracy is compared with, seed by seed. */
  public static final String CENTRAL = "central";

  /** A variant to run: its name, word size (0 with central noise) and simulation. */
  public record Variant(String name, int bits, SimulationConfig config) {}

  /** One replica run of a variant with one seed. */
  public record Run(String variant, int bits, long seed, SecureReplica.Result result) {}

  /**
   * A variant's summary.
   *
   * @param gap accuracy minus central's, the mean over seeds of the paired differences
   * @param gapLow the 95% Student-t interval of that mean (NaN with one seed)
   */
  public record Row(
      String variant,
      int bits,
      double noiseMultiplier,
      double noiseStdOfSum,
      int seeds,
      double accuracy,
      double accuracyCi95Low,
      double accuracyCi95High,
      String accuracyInterval,
      double gap,
      double gapLow,
      double gapHigh,
      long roundsWithoutSum) {}

  /**
   * The variants of {@code base} (its data, clients, rounds and target epsilon; every client in
   * every round): central, secure-central, then distributed noise at each of {@code bits}.
   */
  public static List<Variant> variants(SimulationConfig base, List<Integer> bits) {
    SimulationConfig.Builder plain =
        base.toBuilder().secureAggregation(false).mechanism("independent").sampling("server");
    List<Variant> out = new ArrayList<>();
    out.add(new Variant(CENTRAL, 0, plain.build()));
    out.add(new Variant("secure-central", 0, plain.secureAggregation(true).build()));
    for (int b : bits) {
      out.add(
          new Variant(
              "distributed-" + b,
              b,
              plain
                  .secureAggregation(true)
                  .mechanism("distributed-discrete-gaussian")
                  .bitsPerCoordinate(b)
                  .build()));
    }
    return out;
  }

  /**
   * Each variant's spec as the job reads it, so a refused one (too few bits for the grid, a target
   * no z reaches) fails before any training.
   *
   * @throws IllegalArgumentException naming the variant and the job's reason
   */
  public static List<JobSpec> plan(List<Variant> variants) {
    List<JobSpec> specs = new ArrayList<>();
    for (Variant v : variants) {
      try {
        specs.add(Simulation.plannedSpec(v.config()));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(v.name() + ": " + e.getMessage(), e);
      }
    }
    return specs;
  }

  /**
   * Runs every variant with seeds {@code seed, seed + 1, ...}, clients dropping out of each round
   * with probability {@code dropoutRate}; {@code progress} sees each round of each run with the
   * run's variant and seed.
   */
  public static List<Run> run(
      List<Variant> variants,
      int seeds,
      double dropoutRate,
      BiConsumer<Run, SecureReplica.Round> progress) {
    List<Run> runs = new ArrayList<>();
    for (int s = 0; s < seeds; s++) {
      for (Variant v : variants) {
        SimulationConfig config = v.config().toBuilder().seed(v.config().seed() + s).build();
        Run running = new Run(v.name(), v.bits(), config.seed(), null);
        SecureReplica.Result result =
            SecureReplica.run(config, dropoutRate, round -> progress.accept(running, round));
        runs.add(new Run(v.name(), v.bits(), config.seed(), result));
      }
    }
    return runs;
  }

  /** Each variant's row, in the order of {@code variants}. */
  public static List<Row> rows(List<Variant> variants, List<Run> runs) {
    double[] central = finals(runs, CENTRAL);
    List<Row> rows = new ArrayList<>();
    for (Variant v : variants) {
      List<Run> mine = runs.stream().filter(r -> r.variant().equals(v.name())).toList();
      double[] acc = finals(runs, v.name());
      Evaluation.Interval interval =
          Evaluation.accuracyInterval(acc, mine.get(0).result().testSize());
      double[] gaps =
          IntStream.range(0, acc.length).mapToDouble(i -> acc[i] - central[i]).toArray();
      double gap = Evaluation.mean(gaps);
      double half = gaps.length > 1 ? Evaluation.halfWidth(gaps) : Double.NaN;
      rows.add(
          new Row(
              v.name(),
              v.bits(),
              mine.get(0).result().noiseMultiplier(),
              mine.get(0).result().noiseStdOfSum(),
              acc.length,
              interval.mean(),
              interval.low(),
              interval.high(),
              interval.kind(),
              gap,
              gap - half,
              gap + half,
              mine.stream()
                  .flatMap(r -> r.result().rounds().stream())
                  .filter(r -> !r.summed())
                  .count()));
    }
    return rows;
  }

  /** distributed.csv and .json with every row and run, distributed.png with two charts. */
  public static void write(
      Path dir, SimulationConfig base, double dropoutRate, List<Row> rows, List<Run> runs)
      throws IOException {
    List<String> header =
        List.of(
            "variant",
            "bits",
            "noiseMultiplier",
            "noiseStdOfSum",
            "seeds",
            "accuracy",
            "accuracyCi95Low",
            "accuracyCi95High",
            "accuracyInterval",
            "gapToCentral",
            "gapCi95Low",
            "gapCi95High",
            "roundsWithoutSum");
    List<List<Object>> cells = new ArrayList<>();
    for (Row r : rows) {
      cells.add(
          List.of(
              r.variant(),
              r.bits(),
              r.noiseMultiplier(),
              r.noiseStdOfSum(),
              r.seeds(),
              r.accuracy(),
              r.accuracyCi95Low(),
              r.accuracyCi95High(),
              r.accuracyInterval(),
              r.gap(),
              r.gapLow(),
              r.gapHigh(),
              r.roundsWithoutSum()));
    }
    Reports.csv(dir.resolve("distributed.csv"), header, cells);
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("dataset", base.dataset());
    json.put("model", base.model());
    json.put("clients", base.clients());
    json.put("rounds", base.rounds());
    json.put("targetEpsilon", base.targetEpsilon());
    json.put("delta", base.delta());
    json.put("dropoutRate", dropoutRate);
    json.put("rows", rows);
    json.put("runs", runs);
    Reports.json(dir.resolve("distributed.json"), json);
    Reports.savePng(
        dir.resolve("distributed.png"), List.of(againstBits(base, rows), perRound(rows, runs)));
  }

  /** Final accuracy against bits, the central variants as flat lines across the same bits. */
  private static XYChart againstBits(SimulationConfig base, List<Row> rows) {
    List<Row> distributed = rows.stream().filter(r -> r.bits() > 0).toList();
    double[] bits = distributed.stream().mapToDouble(Row::bits).toArray();
    List<Reports.Series> series = new ArrayList<>();
    series.add(
        new Reports.Series(
            "distributed",
            bits,
            distributed.stream().mapToDouble(Row::accuracy).toArray(),
            distributed.stream()
                .mapToDouble(r -> (r.accuracyCi95High() - r.accuracyCi95Low()) / 2)
                .toArray()));
    double[] ends = {bits[0], bits[bits.length - 1]};
    for (Row r : rows.stream().filter(r -> r.bits() == 0).toList()) {
      series.add(
          new Reports.Series(r.variant(), ends, new double[] {r.accuracy(), r.accuracy()}, null));
    }
    return Reports.chart(
        String.format(
            "%s, %s, %d clients, %d rounds, epsilon %s: final accuracy",
            base.dataset(),
            base.model(),
            base.clients(),
            base.rounds(),
            NumberText.of(base.targetEpsilon())),
        "bits per coordinate",
        "test accuracy (95% CI, " + rows.get(0).accuracyInterval() + ")",
        series);
  }

  /** Each variant's mean test accuracy after each round. */
  private static XYChart perRound(List<Row> rows, List<Run> runs) {
    List<Reports.Series> series = new ArrayList<>();
    for (Row row : rows) {
      List<Run> mine = runs.stream().filter(r -> r.variant().equals(row.variant())).toList();
      int n = mine.get(0).result().rounds().size();
      double[] x = IntStream.rangeClosed(1, n).asDoubleStream().toArray();
      double[] y = new double[n];
      for (Run run : mine) {
        for (int i = 0; i < n; i++) {
          y[i] += run.result().rounds().get(i).accuracy() / mine.size();
        }
      }
      series.add(new Reports.Series(row.variant(), x, y, null));
    }
    XYChart chart =
        Reports.chart(
            "test accuracy per round (mean over seeds)", "round", "test accuracy", series);
    chart.getSeriesMap().values().forEach(s -> s.setMarker(SeriesMarkers.NONE));
    return chart;
  }

  private static double[] finals(List<Run> runs, String variant) {
    return runs.stream()
        .filter(r -> r.variant().equals(variant))
        .mapToDouble(r -> r.result().finalAccuracy())
        .toArray();
  }
}
