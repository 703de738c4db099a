package dev.privagg.correlated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class BltPlanTest {

  @Test
  void of_computesSensitivityAndErrorsFromTheCoefficients() {
    ParticipationSchema schema = new ParticipationSchema(200, 7, 3);
    BufferedToeplitz c = BufferedToeplitz.of(new double[] {0.99, 0.6}, new double[] {0.08, 0.4});
    BltPlan plan = BltPlan.of(schema, c);
    double[] coef = c.toeplitzCoefficients(200);
    double[] noising = Toeplitz.inverseCoefficients(coef, 200);
    assertThat(plan.sensitivity())
        .isCloseTo(Math.sqrt(Toeplitz.minSepSensitivitySquared(coef, 200, 7, 3)), within(1e-12));
    assertThat(plan.maxError()).isCloseTo(Toeplitz.maxError(noising, 200), within(1e-9));
    assertThat(plan.meanError()).isCloseTo(Toeplitz.meanError(noising, 200), within(1e-9));
    assertThat(plan.rootMaxLoss())
        .isCloseTo(plan.sensitivity() * Math.sqrt(plan.maxError()), within(1e-12));
    assertThat(plan.inverse().theta()).containsExactly(c.inverse().theta());
  }

  @Test
  void sensitivityOfFirstRounds_isTheLeadingBlock() {
    ParticipationSchema schema = new ParticipationSchema(100, 10, 4);
    BufferedToeplitz c = BufferedToeplitz.of(new double[] {0.95}, new double[] {0.2});
    BltPlan plan = BltPlan.of(schema, c);
    // t = 10: only one participation fits, the single-participation norm of 10 coefficients.
    assertThat(plan.sensitivityOfFirstRounds(10))
        .isCloseTo(
            Math.sqrt(Toeplitz.sensitivitySquared(c.toeplitzCoefficients(10), 10)), within(1e-12));
    assertThat(plan.sensitivityOfFirstRounds(35))
        .isCloseTo(
            Math.sqrt(Toeplitz.minSepSensitivitySquared(c.toeplitzCoefficients(35), 35, 10, 4)),
            within(1e-12));
    assertThat(plan.sensitivityOfFirstRounds(100)).isEqualTo(plan.sensitivity());
    assertThat(plan.sensitivityOfFirstRounds(35)).isLessThan(plan.sensitivity());
    assertThatThrownBy(() -> plan.sensitivityOfFirstRounds(101))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("t must be in [1, 100], was 101");
  }

  @Test
  void singleParticipation_usesTheClosedFormForLargeN() {
    BltPlan plan = BltPlan.optimized(ParticipationSchema.single(10_000_000), 4, ErrorKind.MAX);
    assertThat(plan.rootMaxLoss() / plan.optimalToeplitzBound()).isLessThan(1.05);
    assertThat(plan.meanError()).isLessThan(plan.maxError());
  }

  @Test
  void of_refusesAStrategyOutsideTheMechanism() {
    ParticipationSchema schema = new ParticipationSchema(100, 10, 4);
    assertThatThrownBy(
            () -> BltPlan.of(schema, BufferedToeplitz.of(new double[] {0.95}, new double[] {1.5})))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sum(omega) must be <= 1 (non-increasing coefficients), was 1.5");
  }

  @Test
  void schema_refusesBadValuesAndCapsParticipations() {
    assertThat(new ParticipationSchema(5, 2, 4).effectiveMaxParticipations()).isEqualTo(3);
    assertThat(new ParticipationSchema(5, 6, 4).effectiveMaxParticipations()).isEqualTo(1);
    assertThat(new ParticipationSchema(4, 3, 9).effectiveMaxParticipations()).isEqualTo(2);
    assertThatThrownBy(() -> new ParticipationSchema(0, 1, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rounds must be >= 1, was 0");
    assertThatThrownBy(() -> new ParticipationSchema(10, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minSeparation must be >= 1, was 0");
    assertThatThrownBy(() -> new ParticipationSchema(10, 1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxParticipations must be >= 1, was 0");
  }
}
