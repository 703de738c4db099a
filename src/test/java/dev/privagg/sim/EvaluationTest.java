package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.spec.JobSpec;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EvaluationTest {
  private static final SimulationConfig.AdaptiveClipping MEDIAN =
      new SimulationConfig.AdaptiveClipping(0.5, 0.2, Double.NaN);

  private static Evaluation.Variant variant(String text) {
    return Evaluation.Variant.parse(
        text,
        MEDIAN,
        (kind, lr) ->
            switch (kind) {
              case SGD -> ServerOptimizer.sgd(lr == null ? 1.0 : lr);
              case AVGM -> ServerOptimizer.avgm(lr == null ? 1.0 : lr, 0.9);
              case ADAM -> ServerOptimizer.adam(lr == null ? 0.01 : lr, 0.9, 0.99, 1e-3);
              case YOGI -> ServerOptimizer.yogi(lr == null ? 0.01 : lr, 0.9, 0.99, 1e-3);
              case RELEASE -> ServerOptimizer.release();
            });
  }

  @Test
  void variant_namesClippingAndOptimizer() {
    Evaluation.Variant fixedSgd = variant("fixed-sgd");
    assertThat(fixedSgd.name()).isEqualTo("fixed-sgd");
    assertThat(fixedSgd.adaptiveClipping()).isNull();
    assertThat(fixedSgd.optimizer()).isEqualTo(ServerOptimizer.sgd(1.0));
    Evaluation.Variant adaptiveAdam = variant(" adaptive-ADAM:0.03 ");
    assertThat(adaptiveAdam.name()).isEqualTo("adaptive-adam:0.03");
    assertThat(adaptiveAdam.adaptiveClipping()).isEqualTo(MEDIAN);
    assertThat(adaptiveAdam.optimizer()).isEqualTo(ServerOptimizer.adam(0.03, 0.9, 0.99, 1e-3));
    assertThat(variant("adaptive-yogi").optimizer().kind()).isEqualTo(ServerOptimizer.Kind.YOGI);
  }

  @Test
  void variant_appliedToABase_keepsItsEpsilonAndSetsClippingAndOptimizer() {
    SimulationConfig base =
        SimulationTest.digits("server", 100, 20, 1.0).toBuilder()
            .serverOptimizer(ServerOptimizer.sgd(2))
            .build();
    SimulationConfig applied = variant("adaptive-avgm:0.5").applyTo(base);
    assertThat(applied.adaptiveClipping()).isEqualTo(MEDIAN);
    assertThat(applied.serverOptimizer()).isEqualTo(ServerOptimizer.avgm(0.5, 0.9));
    assertThat(applied.toBuilder().seed(9).build().rounds()).isEqualTo(base.rounds());
    assertThat(variant("fixed-sgd").applyTo(applied).adaptiveClipping()).isNull();
  }

  @Test
  void variant_resolvedByItsPlannedSpec_statesTheCountNoiseItRunsWith() {
    SimulationConfig base = SimulationTest.digits("server", 100, 20, 1.0);
    Evaluation.Variant adaptive = variant("adaptive-sgd");
    Evaluation.Variant fixed = variant("fixed-sgd");
    List<JobSpec> specs = Evaluation.plan(base, List.of(adaptive, fixed));
    // The spec's default count noise: expected clients / 20.
    assertThat(adaptive.resolvedBy(specs.get(0)).adaptiveClipping())
        .isEqualTo(new SimulationConfig.AdaptiveClipping(0.5, 0.2, 1.0));
    assertThat(fixed.resolvedBy(specs.get(1))).isEqualTo(fixed);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "sgd | variant 'sgd' must read CLIPPING-OPTIMIZER[:SERVER_LR] with CLIPPING fixed or"
            + " adaptive, e.g. adaptive-adam:0.03",
        "flat-adam | variant 'flat-adam' must read CLIPPING-OPTIMIZER[:SERVER_LR] with CLIPPING"
            + " fixed or adaptive, e.g. adaptive-adam:0.03",
        "fixed-lamb | variant 'fixed-lamb': server optimizer must be one of [sgd, avgm, adam,"
            + " yogi], was lamb after 'fixed-'",
        "fixed-adam:fast | variant 'fixed-adam:fast': the server learning rate after ':' must be"
            + " a number"
      })
  void variant_malformed_isRefused_namingTheForm(String text, String message) {
    assertThatThrownBy(() -> variant(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  /**
   * Two-sided 95% critical values of Student's t as printed to three decimals: NIST/SEMATECH
   * e-Handbook of Statistical Methods, Section 1.3.6.7.2, column 0.975 (df up to 100), and Fisher
   * and Yates, Statistical Tables, Table III, P = 0.05 (df 120). Tolerance: half a unit in the last
   * printed place.
   */
  @ParameterizedTest
  @CsvSource({
    "1, 12.706",
    "2, 4.303",
    "5, 2.571",
    "10, 2.228",
    "11, 2.201",
    "15, 2.131",
    "20, 2.086",
    "25, 2.060",
    "30, 2.042",
    "60, 2.000",
    "120, 1.980"
  })
  void tQuantile975_matchesThePublishedTable(int df, double published) {
    assertThat(Evaluation.tQuantile975(df)).isCloseTo(published, within(5e-4));
  }

  @Test
  void tQuantile975_refusesZeroDegreesOfFreedom() {
    assertThatThrownBy(() -> Evaluation.tQuantile975(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("df must be >= 1, was 0");
  }

  @Test
  void halfWidth_isTQuantileTimesStandardError() {
    // 21 values 0..20: mean 10, sample variance 38.5, df 20 (t = 2.086).
    double[] x = new double[21];
    for (int i = 0; i < x.length; i++) {
      x[i] = i;
    }
    assertThat(Evaluation.halfWidth(x)).isCloseTo(2.086 * Math.sqrt(38.5 / 21), within(1e-3));
    assertThat(Evaluation.halfWidth(new double[] {0.7})).isZero();
  }

  /**
   * Wilson score intervals as published by Newcombe, "Two-sided confidence intervals for the single
   * proportion: comparison of seven methods", Statistics in Medicine 17 (1998), Table II, method 3,
   * to four decimals; tolerance half a unit in the last place.
   */
  @ParameterizedTest
  @CsvSource({"81, 263, 0.2553, 0.3662", "15, 148, 0.0624, 0.1605", "0, 20, 0, 0.1611"})
  void wilson_matchesNewcombesTable(int successes, int n, double low, double high) {
    double[] w = Evaluation.wilson((double) successes / n, n);
    assertThat(w[0]).isCloseTo(low, within(5e-5));
    assertThat(w[1]).isCloseTo(high, within(5e-5));
  }

  @Test
  void accuracyInterval_oneSeedIsWilsonOnTheTestSet_severalAreTOverSeeds() {
    Evaluation.Interval one = Evaluation.accuracyInterval(new double[] {0.8}, 10_000);
    assertThat(one.kind()).isEqualTo("Wilson, 10000 test examples");
    assertThat(one.high() - one.low()).isCloseTo(2 * 1.96 * 0.004, within(1e-4)); // sqrt(.16/1e4)
    Evaluation.Interval three = Evaluation.accuracyInterval(new double[] {0.7, 0.8, 0.9}, 10_000);
    assertThat(three.kind()).isEqualTo("t over 3 seeds");
    assertThat(three.mean()).isCloseTo(0.8, within(1e-12));
    assertThat(three.high() - three.mean()).isCloseTo(4.303 * 0.1 / Math.sqrt(3), within(1e-3));
  }
}
