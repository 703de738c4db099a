package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NoisePlannerTest {
  private final RdpAccountant rdp = RdpAccountant.withDefaultOrders();

  @ParameterizedTest
  @CsvSource({
    "1.0, 1e-5, 6000, 0.0025",
    "8.0, 1e-5, 100, 0.2",
    "0.5, 1e-6, 50, 1.0",
    "3.0, 1e-5, 2000, 0.01",
    "0.1, 1e-7, 10, 0.05"
  })
  void plan_thenEpsilon_staysWithinTarget_andIsMinimal(
      double target, double delta, long rounds, double q) {
    double z = new NoisePlanner(rdp).plan(target, delta, rounds, q).noiseMultiplier();
    PrivacyLedger at = PrivacyLedger.of(PrivacyEvent.sampledGaussian(z, q, rounds));
    assertThat(rdp.epsilon(at, delta).epsilon()).isLessThanOrEqualTo(target);
    // Minimal: 0.001% less noise already overshoots the target.
    PrivacyLedger less = PrivacyLedger.of(PrivacyEvent.sampledGaussian(z * (1 - 1e-5), q, rounds));
    assertThat(rdp.epsilon(less, delta).epsilon()).isGreaterThan(target);
  }

  @Test
  void plan_worksWithCompositionAccountants() {
    Accountant advanced = new AdvancedCompositionAccountant();
    NoisePlanner.Plan plan = new NoisePlanner(advanced).plan(4.0, 1e-5, 100, 0.1);
    assertThat(plan.spent().epsilon()).isLessThanOrEqualTo(4.0);
    assertThat(plan.noiseMultiplier())
        .isGreaterThan(new NoisePlanner(rdp).plan(4.0, 1e-5, 100, 0.1).noiseMultiplier());
  }

  @Test
  void unreachableTarget_isRefusedWithAHint() {
    assertThatThrownBy(
            () ->
                new NoisePlanner(new BasicCompositionAccountant()).plan(1e-9, 1e-12, 1_000_000, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("raise targetEpsilon or delta, or plan fewer rounds");
  }

  @Test
  void badTarget_isRefusedByName() {
    assertThatThrownBy(() -> new NoisePlanner(rdp).plan(-1, 1e-5, 10, 0.1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("targetEpsilon must be > 0 and finite, was -1.0");
  }
}
