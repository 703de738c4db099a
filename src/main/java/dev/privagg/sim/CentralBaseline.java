package dev.privagg.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * An evaluation's central baseline: {@link Central} training once per seed, and the mean final test
 * accuracy with its 95% interval ({@link Evaluation#accuracyInterval}).
 */
public record CentralBaseline(
    int epochs,
    int batchSize,
    double learningRate,
    List<Central.Result> runs,
    Evaluation.Interval accuracy) {

  /** Sees every epoch of every seed's training. */
  public interface Progress {
    void epoch(long seed, Central.Epoch epoch);
  }

  /** Trains {@code base}'s model centrally for {@code seeds} seeds, {@code base.seed()} on. */
  public static CentralBaseline train(
      SimulationConfig base,
      int seeds,
      int epochs,
      int batchSize,
      double learningRate,
      Progress progress) {
    if (seeds < 1) {
      throw new IllegalArgumentException("seeds must be >= 1, was " + seeds);
    }
    List<Central.Result> runs = new ArrayList<>();
    for (int s = 0; s < seeds; s++) {
      SimulationConfig config = base.toBuilder().seed(base.seed() + s).build();
      runs.add(
          Central.train(
              config, epochs, batchSize, learningRate, e -> progress.epoch(config.seed(), e)));
    }
    double[] finalAccuracies = runs.stream().mapToDouble(Central.Result::finalAccuracy).toArray();
    return new CentralBaseline(
        epochs,
        batchSize,
        learningRate,
        List.copyOf(runs),
        Evaluation.accuracyInterval(finalAccuracies, runs.get(0).testSize()));
  }
}
