package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.bandmf.BandMfPlan;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The mechanisms of one comparison, planned without a broker. */
class MechanismComparisonTest {
  private static final double DELTA = 1e-5;

  private static SimulationConfig base() {
    return SimulationTest.digits("checkin", 600, 20, 1.0).toBuilder()
        .noiseMultiplier(Double.NaN)
        .targetEpsilon(4.0)
        .rounds(30)
        .minSeparation(10)
        .maxParticipations(3)
        .build();
  }

  @Test
  void independentK_isTheSmallestZWhoseKCompositionsSpendTheTarget() {
    MechanismComparison.Mechanism m = MechanismComparison.of("independent-k", base(), 0);
    Accountant rdp = Accountant.named("rdp");
    double z = m.noiseMultiplier();
    double at = rdp.epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(z, 3)), DELTA).epsilon();
    double below =
        rdp.epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(z * 0.999, 3)), DELTA).epsilon();
    assertThat(at).isLessThanOrEqualTo(4.0).isEqualTo(m.epsilonBound());
    assertThat(below).isGreaterThan(4.0);
    assertThat(m.config().checkInSampling()).isTrue();
    assertThat(m.config().noiseMultiplier()).isEqualTo(z);
  }

  @Test
  void independentK_runsWithItsOwnZ_andAnInfiniteBudget_poissonPlansItsOwn() {
    List<JobSpec> specs = new ArrayList<>();
    List<MechanismComparison.Mechanism> planned =
        MechanismComparison.plan(
            List.of(
                MechanismComparison.of("independent-k", base(), 0),
                MechanismComparison.of("poisson", base(), 0)),
            specs);
    JobSpec independent = specs.get(0);
    assertThat(independent.privacy().noiseMultiplier()).isEqualTo(planned.get(0).noiseMultiplier());
    assertThat(independent.privacy().budgetEpsilon()).isInfinite();
    assertThat(independent.privacy().sampling().mode()).isEqualTo("none");
    JobSpec poisson = specs.get(1);
    assertThat(poisson.privacy().sampling().mode()).isEqualTo("declared-client-poisson");
    assertThat(poisson.privacy().targetEpsilon()).isEqualTo(4.0);
    assertThat(planned.get(1).noiseMultiplier()).isEqualTo(poisson.privacy().noiseMultiplier());
    // z C / m: the fresh Gaussian on a round's average, per coordinate.
    assertThat(planned.get(1).noiseStdPerRound())
        .isEqualTo(poisson.privacy().noiseMultiplier() * 1.0 / 20);
  }

  @Test
  void blt_plansOneGaussianForTheRun_andStatesItsSensitivityAndModelNoise() {
    SimulationConfig base = base();
    List<JobSpec> specs = new ArrayList<>();
    MechanismComparison.Mechanism blt =
        MechanismComparison.plan(List.of(MechanismComparison.of("blt", base, 0)), specs).get(0);
    JobSpec.Privacy p = specs.get(0).privacy();
    assertThat(p.correlated().minSeparation()).isEqualTo(10);
    assertThat(p.correlated().maxParticipations()).isEqualTo(3);
    assertThat(p.plannedRounds()).isEqualTo(30);
    assertThat(p.sampling().mode()).isEqualTo("none");
    assertThat(blt.noiseMultiplier()).isEqualTo(p.noiseMultiplier());
    // One Gaussian of multiplier z spends the target: epsilon(1 x Gaussian(z)) <= 4.
    assertThat(
            Accountant.named("rdp")
                .epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(blt.noiseMultiplier(), 1)), DELTA)
                .epsilon())
        .isLessThanOrEqualTo(4.0);
    assertThat(blt.roundFactor()).isEqualTo(p.correlated().plannedSensitivity());
    // Correlation shrinks the model's noise below independent noise's sqrt(n) per draw.
    assertThat(blt.modelFactor()).isLessThan(blt.roundFactor() * Math.sqrt(30));
    assertThat(blt.modelNoiseStd()).isPositive().isFinite();
  }

  @Test
  void bandmf_takesAFixedBandCount_orPlansOne() {
    SimulationConfig base = base().toBuilder().noiseSource("seeded").build();
    List<JobSpec> specs = new ArrayList<>();
    MechanismComparison.plan(
        List.of(
            MechanismComparison.of("bandmf", base, 2), MechanismComparison.of("bandmf", base, 0)),
        specs);
    assertThat(specs.get(0).privacy().correlated().bandedStrategy().bands()).isEqualTo(2);
    // 600 clients, cohort 20, 30 rounds at epsilon 4: the planner's own count, not the fixed one.
    assertThat(specs.get(1).privacy().correlated().bandedStrategy().bands())
        .isEqualTo(
            BandMfPlan.plan(600, 20, 30, 4.0, DELTA, Accountant.named("rdp"), ErrorKind.MEAN, null)
                .best()
                .bands());
    assertThat(specs.get(0).privacy().noiseMultiplier())
        .isNotEqualTo(specs.get(1).privacy().noiseMultiplier());
  }

  // FedAvgM: x_n - x_0 = eta sum_s a_(n-s) (avg_s + noise_s), a_k = (1 - beta^(k+1)) / (1 - beta),
  // so independent noise reaches the last model with std eta z C / m sqrt(sum_k a_k^2); a BLT's
  // is known for the prefix sums only, and Adam's steps are not linear in the noise.
  @Test
  void underServerMomentum_theModelNoiseSumsThroughTheMomentum() {
    double beta = 0.9;
    SimulationConfig avgm =
        base().toBuilder()
            .noiseSource("seeded")
            .serverOptimizer(ServerOptimizer.avgm(0.2, beta))
            .build();
    List<MechanismComparison.Mechanism> planned =
        MechanismComparison.plan(
            List.of(
                MechanismComparison.of("poisson", avgm, 0),
                MechanismComparison.of("blt", avgm, 0),
                MechanismComparison.of("bandmf", avgm, 3)),
            new ArrayList<>());
    double squares = 0;
    for (int k = 0; k < 30; k++) {
      double a = (1 - Math.pow(beta, k + 1)) / (1 - beta);
      squares += a * a;
    }
    MechanismComparison.Mechanism poisson = planned.get(0);
    assertThat(poisson.modelNoiseStd())
        .isCloseTo(0.2 * poisson.noiseMultiplier() * Math.sqrt(squares) / 20, within(1e-12));
    assertThat(planned.get(1).modelNoiseStd()).isNaN();
    assertThat(planned.get(2).modelNoiseStd()).isPositive().isFinite();
    SimulationConfig adam =
        base().toBuilder().serverOptimizer(ServerOptimizer.adam(0.01, 0.9, 0.99, 1e-3)).build();
    assertThat(MechanismComparison.of("poisson", adam, 0).modelNoiseStd()).isNaN();
  }

  // The audit whitens by C only where the released deltas carry sigma C^-1 Z as they are.
  @Test
  void theAuditWhitens_bandedNoiseUnderSgd_only() {
    SimulationConfig base = base().toBuilder().noiseSource("seeded").build();
    List<JobSpec> specs = new ArrayList<>();
    MechanismComparison.plan(
        List.of(
            MechanismComparison.of("bandmf", base, 3),
            MechanismComparison.of(
                "bandmf",
                base.toBuilder().serverOptimizer(ServerOptimizer.avgm(0.2, 0.9)).build(),
                3),
            MechanismComparison.of("blt", base, 0),
            MechanismComparison.of("poisson", base, 0)),
        specs);
    assertThat(Simulation.whitening(specs.get(0)))
        .hasSize(3)
        .containsExactly(specs.get(0).privacy().correlated().bandCoefficients());
    for (JobSpec other : specs.subList(1, 4)) {
      assertThat(Simulation.whitening(other)).containsExactly(1.0);
    }
  }

  @Test
  void anUnknownMechanism_isRefusedWithTheKnownOnes() {
    assertThatThrownBy(() -> MechanismComparison.of("dp-ftrl", base(), 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("mechanism must be one of blt, independent-k, poisson, bandmf, was 'dp-ftrl'");
  }
}
