package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.optimizer.ServerOptimizer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The files of a sweep and of a comparison, from made-up runs (no simulation). */
class EvaluationReportTest {
  private static final List<String> SETTING_COLUMNS =
      List.of(
          "cohort",
          "noiseMultiplier",
          "epsilon",
          "seeds",
          "accuracy",
          "accuracyCi95Low",
          "accuracyCi95High",
          "accuracyInterval",
          "membershipAuc",
          "membershipAucCi95",
          "epsilonHat",
          "oneRunFdpEpsilon");

  private static Evaluation.Run run(String variant, double z, long seed, double accuracy) {
    return new Evaluation.Run(
        variant,
        20,
        z,
        seed,
        z == 0 ? Double.POSITIVE_INFINITY : 4 / z,
        accuracy,
        0.5,
        359,
        0,
        1.0,
        new double[] {accuracy / 2, accuracy},
        40,
        40,
        0,
        z == 0 ? Double.NaN : 2 / z,
        z == 0 ? Double.NaN : 0.5 / z);
  }

  private static List<Evaluation.Run> sweepRuns() {
    List<Evaluation.Run> runs = new ArrayList<>();
    for (double z : new double[] {1.0, 2.0, 0.0}) {
      for (long seed = 1; seed <= 2; seed++) {
        runs.add(run(z == 0 ? "non-private" : "private", z, seed, 0.6 + 0.1 * seed - 0.05 * z));
      }
    }
    return runs;
  }

  private static CentralBaseline central() {
    Central.Result result = new Central.Result(List.of(new Central.Epoch(1, 0.9, 5)), 0.9, 359);
    return new CentralBaseline(
        1,
        32,
        0.1,
        List.of(result),
        Evaluation.accuracyInterval(new double[] {result.finalAccuracy()}, 359));
  }

  @Test
  void sweep_hasARowPerSetting_thenTheCentralBaseline_withoutCohortNoiseOrAttack() {
    List<Evaluation.Run> runs = sweepRuns();
    EvaluationReport report =
        EvaluationReport.sweep(
            SimulationTest.digits("server", 100, 20, 1.0),
            Evaluation.summarise(runs),
            runs,
            central());
    List<String> header = new ArrayList<>(List.of("variant"));
    header.addAll(SETTING_COLUMNS);
    assertThat(report.header()).isEqualTo(header);
    assertThat(report.rows())
        .extracting(r -> r.get(0))
        .containsExactly("private", "private", "non-private", "central");
    double[] wilson = Evaluation.wilson(0.9, 359);
    assertThat(report.rows().get(3))
        .isEqualTo(
            Arrays.asList(
                "central",
                null,
                null,
                null,
                1,
                0.9,
                wilson[0],
                wilson[1],
                "Wilson, 359 test examples",
                null,
                null,
                null,
                null));
    // The audit's columns: the mean over seeds, empty without canaries (the non-private runs).
    int epsilonHat = header.indexOf("epsilonHat");
    assertThat(report.rows().get(0).get(epsilonHat)).isEqualTo(2.0);
    assertThat(report.rows().get(0).get(epsilonHat + 1)).isEqualTo(0.5);
    assertThat(report.rows().get(2).get(epsilonHat)).isNull();
    assertThat(report.json().keySet())
        .containsExactly(
            "dataset",
            "model",
            "clients",
            "sampling",
            "rounds",
            "delta",
            "settings",
            "runs",
            "central");
    assertThat(report.pngs().keySet())
        .containsExactly(
            "accuracy-per-round.png", "accuracy-vs-epsilon.png", "auc-vs-epsilon.png", "audit.png");
  }

  @Test
  void comparison_namesClippingAndOptimizerFirst_andTheFinalClipNormLast() {
    List<Evaluation.Variant> variants =
        List.of(
            new Evaluation.Variant("fixed-sgd", null, ServerOptimizer.sgd(1.0)),
            new Evaluation.Variant(
                "adaptive-adam:0.05",
                new SimulationConfig.AdaptiveClipping(0.5, 0.2, 1.0),
                ServerOptimizer.adam(0.05, 0.9, 0.99, 1e-3)));
    List<Evaluation.Run> runs =
        List.of(run("fixed-sgd", 0.8, 1, 0.7), run("adaptive-adam:0.05", 0.9, 1, 0.6));
    SimulationConfig base =
        SimulationTest.digits("server", 100, 20, 1.0).toBuilder()
            .noiseMultiplier(Double.NaN)
            .targetEpsilon(4.0)
            .build();
    EvaluationReport report =
        EvaluationReport.comparison(base, variants, Evaluation.summarise(runs), runs);
    List<String> header =
        new ArrayList<>(List.of("variant", "clipping", "serverOptimizer", "serverLearningRate"));
    header.addAll(SETTING_COLUMNS);
    header.add("finalClipNorm");
    assertThat(report.header()).isEqualTo(header);
    assertThat(report.rows().get(1).subList(0, 4))
        .containsExactly("adaptive-adam:0.05", "adaptive", "adam", 0.05);
    assertThat(report.rows().get(1)).hasSize(header.size()).endsWith(1.0);
    assertThat(report.json())
        .containsEntry("targetEpsilon", 4.0)
        .containsEntry("variants", variants);
    assertThat(report.pngs().keySet()).containsExactly("comparison.png", "audit.png");
    assertThat(report.pngs().get("comparison.png")).hasSize(2);
  }

  @Test
  void writeTo_writesTheCsvTheJsonAndEveryPng(@TempDir Path dir) throws Exception {
    List<Evaluation.Run> runs = sweepRuns();
    EvaluationReport.sweep(
            SimulationTest.digits("server", 100, 20, 1.0), Evaluation.summarise(runs), runs, null)
        .writeTo(dir.resolve("out"));
    assertThat(Files.readString(dir.resolve("out/evaluation.csv")))
        .startsWith("variant,cohort,noiseMultiplier,")
        .doesNotContain("central");
    assertThat(dir.resolve("out/evaluation.json")).exists();
    assertThat(dir.resolve("out/accuracy-per-round.png")).exists();
    assertThat(dir.resolve("out/accuracy-vs-epsilon.png")).exists();
    assertThat(dir.resolve("out/auc-vs-epsilon.png")).exists();
  }
}
