package dev.privagg.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.correlated.BltPlan;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import org.junit.jupiter.api.Test;

/** {@code privacy.mechanism: blt}: what it plans, and every combination it refuses. */
class CorrelatedSpecTest {
  private static final String BLT =
      """
      jobId: blt-job
      model:
        tensors: [{name: w, shape: [4]}]
      rounds:
        timeout: 2s
        expectedClients: 4
      privacy:
        clipNorm: 1.0
        delta: 1e-5
        budgetEpsilon: 10
        accountant: pld
        mechanism: blt
        blt: {minSeparation: 5, maxParticipations: 2, buffers: 2}
        plannedRounds: 100
        targetEpsilon: 4
        noise: {source: seeded, seed: 1}
      """;

  private static JobSpec parse(String yaml) {
    return JobSpecReader.parse("t", yaml);
  }

  @Test
  void targetEpsilon_plansTheWholeRunAsOneGaussian_withTheOptimizedBltsSensitivity() {
    JobSpec spec = parse(BLT);
    JobSpec.Correlated c = spec.privacy().correlated();
    assertThat(c.theta()).hasSize(2);
    BltPlan plan = BltPlan.of(c.schema(100), c.strategy());
    assertThat(c.plannedSensitivity()).isEqualTo(plan.sensitivity());
    double z = spec.privacy().noiseMultiplier();
    assertThat(CorrelatedNoiseAccounting.epsilon(Accountant.named("pld"), z, 1e-5))
        .isLessThanOrEqualTo(4)
        .isGreaterThan(3.999);
    assertThat(spec.mechanism(1.0).sigma()).isEqualTo(z * c.plannedSensitivity());
  }

  @Test
  void explicitThetaAndOmega_areTaken_andABadPairIsRefusedWithTheReason() {
    JobSpec spec =
        parse(BLT.replace("buffers: 2}", "buffers: 2, theta: [0.9, 0.4], omega: [0.2, 0.15]}"));
    assertThat(spec.privacy().correlated().theta()).containsExactly(0.9, 0.4);
    assertThatThrownBy(() -> parse(BLT.replace("buffers: 2}", "theta: [1.2], omega: [0.1]}")))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("privacy.blt.theta")
        .hasMessageContaining("1.2");
  }

  @Test
  void whatTheMatrixMechanismsAccountingDoesNotCover_isRefusedAtRead() {
    assertRefused(
        BLT.replace("noise: {source: seeded, seed: 1}", "noise: {source: secure}"),
        "privacy.noise.source");
    assertRefused(
        BLT.replace("accountant: pld", "accountant: basic"), "must be pld or rdp with mechanism");
    assertRefused(
        BLT.replace(
            "plannedRounds: 100",
            "plannedRounds: 100\n  sampling: {mode: server-poisson, rate: 0.5}"),
        "no amplification by sampling");
    assertRefused(
        BLT.replace("expectedClients: 4", "expectedClients: 4\n  closeEarly: true"),
        "rounds.closeEarly");
    assertRefused(
        BLT.replace(
            "expectedClients: 4", "expectedClients: 4\n  minimumCohort: {count: 2, noiseStd: 1}"),
        "rounds.minimumCohort");
    assertRefused(
        BLT.replace(
            "plannedRounds: 100",
            "plannedRounds: 100\n  adaptiveClipping: {targetQuantile: 0.5, countNoiseStd: 1}"),
        "adaptiveClipping");
    assertRefused(
        BLT.replace("  blt: {minSeparation: 5, maxParticipations: 2, buffers: 2}\n", ""),
        "privacy.blt");
    assertRefused(BLT.replace("buffers: 2", "buffers: 9"), "privacy.blt.buffers must be in [1, 8]");
    assertRefused(BLT.replace("minSeparation: 5", "minSeparation: 0"), "privacy.blt.minSeparation");
    assertRefused(
        BLT.replace("targetEpsilon: 4", "targetEpsilon: 4\n  noiseMultiplier: 1"), "exactly one");
    assertRefused(
        BLT.replace("  mechanism: blt\n", "")
            .replace("accountant: pld", "accountant: pld\n  noiseMultiplier: 1")
            .replace("  targetEpsilon: 4\n", ""),
        "privacy.blt is read only with privacy.mechanism: blt");
    // The noise std is z * C * sensitivity: finite z and C may still overflow it.
    assertRefused(
        BLT.replace("targetEpsilon: 4", "noiseMultiplier: 1e300"),
        "privacy.noiseMultiplier gives a noise std of");
  }

  private static void assertRefused(String yaml, String message) {
    assertThatThrownBy(() -> parse(yaml))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining(message);
  }
}
