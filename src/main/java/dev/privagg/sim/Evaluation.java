package dev.privagg.sim;

import dev.privagg.client.data.Datasets;
import dev.privagg.client.train.Model;
import dev.privagg.io.KafkaConnection;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.apache.commons.statistics.distribution.TDistribution;

/**
 * A privacy/utility sweep: for each cohort size and noise multiplier (and the non-private baseline,
 * noise 0), several seeds through the real pipeline; per setting the epsilon spent, the test
 * accuracy and the loss-threshold membership-inference AUC with 95% confidence intervals. A
 * comparison ({@link #compare}) runs named {@link Variant}s (fixed or adaptive C, a server
 * optimizer) at the same target epsilon instead, each with the noise multiplier its job spec plans.
 */
public final class Evaluation {
  private Evaluation() {}

  /**
   * One simulation's outcome; {@code testSize} examples measured its accuracy. {@code variant} is
   * "private" or "non-private" in a sweep, the variant's name in a comparison; {@code
   * finalClipNorm} is the last round's C. {@code updatesSent} counts what the clients sent, {@code
   * updatesUsed} what the released rounds summed, {@code participationRejects} the updates the job
   * turned away for breaking its participation schema. With canaries, {@code epsilonHat} and {@code
   * oneRunFdpEpsilon} are the audit's estimate and its f-DP one-run lower bound, the one its
   * verdict reads, on its headline score (NaN without).
   */
  public record Run(
      String variant,
      int cohort,
      double noiseMultiplier,
      long seed,
      double epsilon,
      double accuracy,
      double auc,
      int testSize,
      long roundsSentAfterDeadline,
      double finalClipNorm,
      double[] accuracyPerRound,
      long updatesSent,
      long updatesUsed,
      long participationRejects,
      double epsilonHat,
      double oneRunFdpEpsilon) {}

  /**
   * A setting's summary over seeds. The accuracy interval is a 95% Student-t interval over seeds
   * when there are several, else the 95% Wilson score interval of the one run's test accuracy
   * ({@code accuracyInterval} says which); the AUC half-width is a t-interval (0 for one seed).
   * {@code accuracyPerRound} is the mean over seeds after each round, {@code finalClipNorm} the
   * mean last C, {@code epsilonHat} and {@code oneRunFdpEpsilon} the audit's means (NaN without
   * canaries).
   */
  public record Setting(
      String variant,
      int cohort,
      double noiseMultiplier,
      double epsilon,
      int seeds,
      double accuracy,
      double accuracyLow,
      double accuracyHigh,
      String accuracyInterval,
      double auc,
      double aucHalfWidth,
      double finalClipNorm,
      double[] accuracyPerRound,
      double epsilonHat,
      double oneRunFdpEpsilon) {}

  /**
   * Runs every setting on {@code kafka}; {@code roundProgress} sees each round, {@code progress}
   * each run.
   */
  public static List<Run> sweep(
      SimulationConfig base,
      List<Integer> cohorts,
      List<Double> noiseMultipliers,
      int seeds,
      KafkaConnection kafka,
      Consumer<Simulation.RoundResult> roundProgress,
      Consumer<Run> progress)
      throws Exception {
    List<Run> runs = new ArrayList<>();
    for (int cohort : cohorts) {
      List<Double> settings = new ArrayList<>(noiseMultipliers);
      settings.add(0.0); // the non-private baseline, through the same pipeline
      for (double z : settings) {
        for (int s = 0; s < seeds; s++) {
          SimulationConfig config =
              base.toBuilder()
                  .expectedClients(cohort)
                  .noiseMultiplier(z)
                  .seed(base.seed() + s)
                  .build();
          Simulation.Result result = Simulation.run(config, kafka, roundProgress);
          Run run = run(z == 0 ? "non-private" : "private", config, result);
          runs.add(run);
          progress.accept(run);
        }
      }
    }
    return runs;
  }

  /**
   * A named setting of a comparison: fixed C or adaptive clipping, and a server optimizer. Its name
   * reads {@code CLIPPING-OPTIMIZER[:SERVER_LR]}, e.g. {@code fixed-sgd} or {@code
   * adaptive-adam:0.03}, so one comparison can hold several learning rates.
   */
  public record Variant(
      String name, SimulationConfig.AdaptiveClipping adaptiveClipping, ServerOptimizer optimizer) {
    public static final List<String> CLIPPINGS = List.of("fixed", "adaptive");

    public Variant {
      if (!(name != null && !name.isBlank())) {
        throw new IllegalArgumentException("name must not be blank, was '" + name + "'");
      }
      if (optimizer == null) {
        throw new IllegalArgumentException("optimizer must be given, was null");
      }
    }

    /**
     * This variant as its {@code planned} job spec resolved it: adaptive clipping states the count
     * noise it runs with (m / 20 unless given), not NaN.
     */
    public Variant resolvedBy(JobSpec planned) {
      if (adaptiveClipping == null) {
        return this;
      }
      return new Variant(
          name,
          new SimulationConfig.AdaptiveClipping(
              adaptiveClipping.targetQuantile(),
              adaptiveClipping.learningRate(),
              planned.privacy().adaptiveClipping().countNoiseStd()),
          optimizer);
    }

    /** {@code variants} by name, in their order. */
    public static Map<String, Variant> byName(List<Variant> variants) {
      Map<String, Variant> byName = new LinkedHashMap<>();
      variants.forEach(v -> byName.put(v.name(), v));
      return byName;
    }

    /** {@code base} with this variant's clipping and server optimizer. */
    public SimulationConfig applyTo(SimulationConfig base) {
      return base.toBuilder().adaptiveClipping(adaptiveClipping).serverOptimizer(optimizer).build();
    }

    /**
     * Parses {@code CLIPPING-OPTIMIZER[:SERVER_LR]} ({@code fixed} or {@code adaptive}; {@code
     * sgd}, {@code avgm}, {@code adam} or {@code yogi}): {@code adaptive} variants get {@code
     * adaptive}, and {@code optimizers} makes the optimizer from its kind and the learning rate
     * (null when the name gives none).
     */
    public static Variant parse(
        String text,
        SimulationConfig.AdaptiveClipping adaptive,
        BiFunction<ServerOptimizer.Kind, Double, ServerOptimizer> optimizers) {
      String token = text.trim();
      String name = token;
      Double lr = null;
      int colon = token.indexOf(':');
      if (colon >= 0) {
        name = token.substring(0, colon);
        try {
          lr = Double.parseDouble(token.substring(colon + 1));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(
              "variant '" + token + "': the server learning rate after ':' must be a number");
        }
      }
      int dash = name.indexOf('-');
      String clipping = (dash < 0 ? name : name.substring(0, dash)).toLowerCase(Locale.ROOT);
      if (dash < 0 || !CLIPPINGS.contains(clipping)) {
        throw new IllegalArgumentException(
            "variant '"
                + token
                + "' must read CLIPPING-OPTIMIZER[:SERVER_LR] with CLIPPING fixed or adaptive,"
                + " e.g. adaptive-adam:0.03");
      }
      ServerOptimizer.Kind kind;
      try {
        kind = ServerOptimizer.Kind.parse(name.substring(dash + 1));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "variant '" + token + "': " + e.getMessage() + " after '" + clipping + "-'");
      }
      return new Variant(
          clipping + "-" + kind.specName() + (colon < 0 ? "" : token.substring(colon)),
          clipping.equals("adaptive") ? adaptive : null,
          optimizers.apply(kind, lr));
    }
  }

  /**
   * Each variant's job spec on {@code base}, in order, so that a variant whose target epsilon
   * cannot be reached fails before any run starts. Adaptive clipping charges its noisy count with
   * the sum: the charged noise multiplier (z^-2 + (2 sigma_b)^-2)^-1/2 stays below 2 sigma_b
   * whatever z is, so a small count noise can make a target unreachable.
   */
  public static List<JobSpec> plan(SimulationConfig base, List<Variant> variants) {
    Datasets.Split data = Datasets.load(base.dataset(), base.seed());
    Model model =
        Model.named(
            base.model(), data.train().numFeatures(), data.train().numClasses(), base.hidden());
    List<JobSpec> specs = new ArrayList<>();
    for (Variant v : variants) {
      try {
        specs.add(JobSpecReader.parse(v.name(), Simulation.specYaml(v.applyTo(base), model)));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            e.getMessage()
                + (v.adaptiveClipping() == null
                    ? ""
                    : "; adaptive clipping charges its count with the sum, which keeps the charged"
                        + " noise multiplier below 2 x the count's noise std (--clip-count-noise,"
                        + " default m / 20): raise it"),
            e);
      }
    }
    return specs;
  }

  /**
   * Runs every variant on {@code base} (its target epsilon, rounds and cohort), seeds {@code
   * base.seed()} on; each variant's job spec plans its own noise multiplier for that epsilon.
   */
  public static List<Run> compare(
      SimulationConfig base,
      List<Variant> variants,
      int seeds,
      KafkaConnection kafka,
      Consumer<Simulation.RoundResult> roundProgress,
      Consumer<Run> progress)
      throws Exception {
    if (!Double.isNaN(base.noiseMultiplier())) {
      throw new IllegalArgumentException(
          "a comparison plans each variant's noise multiplier from the target epsilon;"
              + " noiseMultiplier must be NaN, was "
              + base.noiseMultiplier());
    }
    List<Run> runs = new ArrayList<>();
    for (Variant variant : variants) {
      for (int s = 0; s < seeds; s++) {
        SimulationConfig config = variant.applyTo(base).toBuilder().seed(base.seed() + s).build();
        Run run = run(variant.name(), config, Simulation.run(config, kafka, roundProgress));
        runs.add(run);
        progress.accept(run);
      }
    }
    return runs;
  }

  static Run run(String variant, SimulationConfig config, Simulation.Result result) {
    return new Run(
        variant,
        config.expectedClients(),
        result.spec().privacy().noiseMultiplier(),
        config.seed(),
        result.epsilon(),
        result.finalAccuracy(),
        result.membershipAuc(),
        result.testSize(),
        result.roundsSentAfterDeadline(),
        result.finalClipNorm(),
        result.accuracyPerRound(),
        result.updatesSent(),
        result.updatesUsed(),
        result.participationRejects(),
        result.audit() == null ? Double.NaN : result.audit().headlineEstimate().epsilonHat(),
        result.audit() == null ? Double.NaN : result.audit().headlineEstimate().oneRunFdpEpsilon());
  }

  /** Groups runs by (variant, cohort, noise multiplier) and summarises each group. */
  public static List<Setting> summarise(List<Run> runs) {
    List<Setting> out = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    for (Run r : runs) {
      String key = r.variant() + "/" + r.cohort() + "/" + r.noiseMultiplier();
      if (seen.contains(key)) {
        continue;
      }
      seen.add(key);
      List<Run> group =
          runs.stream()
              .filter(
                  x ->
                      x.variant().equals(r.variant())
                          && x.cohort() == r.cohort()
                          && x.noiseMultiplier() == r.noiseMultiplier())
              .toList();
      double[] acc = group.stream().mapToDouble(Run::accuracy).toArray();
      double[] auc = group.stream().mapToDouble(Run::auc).toArray();
      Interval accuracy = accuracyInterval(acc, r.testSize());
      int rounds = group.stream().mapToInt(x -> x.accuracyPerRound().length).min().orElse(0);
      double[] perRound = new double[rounds];
      for (int i = 0; i < rounds; i++) {
        final int round = i;
        perRound[i] =
            group.stream().mapToDouble(x -> x.accuracyPerRound()[round]).average().orElse(0);
      }
      out.add(
          new Setting(
              r.variant(),
              r.cohort(),
              r.noiseMultiplier(),
              r.epsilon(),
              group.size(),
              accuracy.mean(),
              accuracy.low(),
              accuracy.high(),
              accuracy.kind(),
              mean(auc),
              halfWidth(auc),
              mean(group.stream().mapToDouble(Run::finalClipNorm).toArray()),
              perRound,
              mean(group.stream().mapToDouble(Run::epsilonHat).toArray()),
              mean(group.stream().mapToDouble(Run::oneRunFdpEpsilon).toArray())));
    }
    return out;
  }

  /** A mean accuracy with its 95% interval and how the interval was made. */
  public record Interval(double mean, double low, double high, String kind) {}

  /**
   * The mean of {@code accuracies} (one per seed) with a 95% interval: Student-t over seeds when
   * there are several, else the Wilson interval of the one accuracy on {@code testSize} examples
   * (test-set sampling error only; it says nothing about the spread over training seeds).
   */
  public static Interval accuracyInterval(double[] accuracies, int testSize) {
    double m = mean(accuracies);
    if (accuracies.length > 1) {
      double h = halfWidth(accuracies);
      return new Interval(m, m - h, m + h, "t over " + accuracies.length + " seeds");
    }
    double[] w = wilson(m, testSize);
    return new Interval(m, w[0], w[1], "Wilson, " + testSize + " test examples");
  }

  /**
   * The 95% Wilson score interval of a proportion {@code p} observed on {@code n} trials (Wilson
   * 1927; Brown, Cai and DasGupta 2001, eq. 4): center (p + z^2/2n) / (1 + z^2/n), half-width z /
   * (1 + z^2/n) * sqrt(p(1-p)/n + z^2/4n^2), z = 1.959964. It stays inside [0, 1] and is sound at p
   * near 0 or 1, where the normal (Wald) interval is not.
   */
  public static double[] wilson(double p, int n) {
    if (!(p >= 0 && p <= 1)) {
      throw new IllegalArgumentException("p must be in [0, 1], was " + p);
    }
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, was " + n);
    }
    double z = 1.959963984540054;
    double z2n = z * z / n;
    double center = (p + z2n / 2) / (1 + z2n);
    double half = z / (1 + z2n) * Math.sqrt(p * (1 - p) / n + z2n / (4.0 * n));
    return new double[] {center - half, center + half};
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
