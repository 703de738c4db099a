package dev.privagg.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.commons.statistics.distribution.TDistribution;

/**
 * A privacy/utility sweep: for each cohort size and noise multiplier (and the non-private baseline,
 * noise 0), several seeds through the real pipeline; per setting the epsilon spent, the test
 * accuracy and the loss-threshold membership-inference AUC with 95% confidence intervals.
 */
public final class Evaluation {
  private Evaluation() {}

  /** One simulation's outcome. */
  public record Run(
      int cohort, double noiseMultiplier, long seed, double epsilon, double accuracy, double auc) {}

  /** A setting's summary over seeds; half-widths of 95% t-intervals. */
  public record Setting(
      int cohort,
      double noiseMultiplier,
      double epsilon,
      int seeds,
      double accuracy,
      double accuracyHalfWidth,
      double auc,
      double aucHalfWidth) {}

  /** Runs every setting on {@code bootstrapServers}; {@code progress} sees each run. */
  public static List<Run> sweep(
      SimulationConfig base,
      List<Integer> cohorts,
      List<Double> noiseMultipliers,
      int seeds,
      String bootstrapServers,
      Consumer<Run> progress)
      throws Exception {
    List<Run> runs = new ArrayList<>();
    for (int cohort : cohorts) {
      List<Double> settings = new ArrayList<>(noiseMultipliers);
      settings.add(0.0); // the non-private baseline, through the same pipeline
      for (double z : settings) {
        for (int s = 0; s < seeds; s++) {
          SimulationConfig config = base.withCohort(cohort).withNoise(z).withSeed(base.seed() + s);
          Simulation.Result result = Simulation.run(config, bootstrapServers, r -> {});
          Run run =
              new Run(
                  cohort,
                  z,
                  config.seed(),
                  result.epsilon(),
                  result.finalAccuracy(),
                  result.membershipAuc());
          runs.add(run);
          progress.accept(run);
        }
      }
    }
    return runs;
  }

  /** Groups runs by (cohort, noise multiplier) and summarises each group. */
  public static List<Setting> summarise(List<Run> runs) {
    List<Setting> out = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    for (Run r : runs) {
      String key = r.cohort() + "/" + r.noiseMultiplier();
      if (seen.contains(key)) {
        continue;
      }
      seen.add(key);
      List<Run> group =
          runs.stream()
              .filter(x -> x.cohort() == r.cohort() && x.noiseMultiplier() == r.noiseMultiplier())
              .toList();
      double[] acc = group.stream().mapToDouble(Run::accuracy).toArray();
      double[] auc = group.stream().mapToDouble(Run::auc).toArray();
      out.add(
          new Setting(
              r.cohort(),
              r.noiseMultiplier(),
              r.epsilon(),
              group.size(),
              mean(acc),
              halfWidth(acc),
              mean(auc),
              halfWidth(auc)));
    }
    return out;
  }

  static double mean(double[] x) {
    double s = 0;
    for (double v : x) {
      s += v;
    }
    return s / x.length;
  }

  /** Half-width of the 95% Student-t interval of the mean; 0 for a single value. */
  static double halfWidth(double[] x) {
    int n = x.length;
    if (n < 2) {
      return 0;
    }
    double m = mean(x);
    double ss = 0;
    for (double v : x) {
      ss += (v - m) * (v - m);
    }
    return tQuantile975(n - 1) * Math.sqrt(ss / (n - 1)) / Math.sqrt(n);
  }

  /** The 0.975 quantile of Student's t with {@code df} degrees of freedom (two-sided 95%). */
  static double tQuantile975(int df) {
    if (!(df >= 1)) {
      throw new IllegalArgumentException("df must be >= 1, was " + df);
    }
    return TDistribution.of(df).inverseCumulativeProbability(0.975);
  }
}
