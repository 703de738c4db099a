package dev.privagg.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.distributed.DistributedNoisePlan;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.MechanismKind;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.UnmaskingGate;
import org.junit.jupiter.api.Test;

/** {@code privacy.mechanism: distributed-discrete-gaussian}: what it plans and what it refuses. */
class DistributedNoiseSpecTest {
  private static final String SPEC =
      """
      jobId: ddg-job
      model:
        tensors:
          - {name: w, shape: [64, 10]}
          - {name: b, shape: [10]}
      rounds:
        timeout: 60s
        expectedClients: 100
        maxClients: 200
        minimumCohort: {count: 95, noiseStd: 10}
      privacy:
        mechanism: distributed-discrete-gaussian
        clipNorm: 0.5
        %s
        delta: 1e-5
        budgetEpsilon: 10
      aggregation: {mode: secure%s}
      """;

  private static JobSpec parse(String privacy, String aggregation) {
    return JobSpecReader.parse("t", SPEC.formatted(privacy, aggregation));
  }

  @Test
  void plansSharesForTheFewestHonestInputsAndChargesTheDistributedMechanism() {
    JobSpec spec = parse("noiseMultiplier: 1.0", "");
    DistributedNoisePlan plan = spec.distributedNoise();
    assertThat(plan.bits()).isEqualTo(18); // the default
    assertThat(plan.dimension()).isEqualTo(650);
    assertThat(plan.paddedDimension()).isEqualTo(1024);
    assertThat(plan.maxInputs()).isEqualTo(200);
    // The gate passes fewer than floor(95 + 1 - 7.0477 * 10) = 25 inputs with probability 2^-40;
    // a roster of at most 26 / 0.9 holds at most 2 colluders (rates 0.1 each).
    assertThat(UnmaskingGate.fewestMaskedInputs(95, 10)).isEqualTo(25);
    assertThat(plan.noiseShares()).isEqualTo(25 - 2);
    assertThat(plan.noiseShares())
        .isEqualTo(
            UnmaskingGate.fewestHonestInputs(
                RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server"), 95, 10));
    assertThat(plan.noiseMultiplier()).isGreaterThanOrEqualTo(1.0);
    assertThat(spec.privacy().noiseMultiplier()).isEqualTo(plan.noiseMultiplier());
    assertThat(spec.maskedDimension()).isEqualTo(1024);
    assertThat(spec.maskedWordBits()).isEqualTo(18);
    PrivacyEvent event = spec.roundCharge().event(spec.privacy().noiseMultiplier(), 3);
    assertThat(event.kind()).isEqualTo(MechanismKind.DISTRIBUTED_DISCRETE_GAUSSIAN);
    assertThat(event.samplingRate()).isEqualTo(1.0);
    // The gate's own 2^-40 joins delta's secure failure term.
    assertThat(spec.secureFailureProbabilityPerRound())
        .isGreaterThan(UnmaskingGate.belowFewestProbability(95, 10));
  }

  @Test
  void theFewestHonestInputsCountTheRosterTheGateAllowsAndItsColluders() {
    // floor(32.1 + 1 - 7.03) = 26 inputs; a roster behind them has at most 27 / 0.9 = 30 clients,
    // 3 of them colluders at rate 0.1 (26 / 0.9 or 27 alone would give 2).
    assertThat(UnmaskingGate.fewestMaskedInputs(32.1, 1)).isEqualTo(26);
    assertThat(
            UnmaskingGate.fewestHonestInputs(
                RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server"), 32.1, 1))
        .isEqualTo(23);
    assertThat(
            UnmaskingGate.fewestHonestInputs(
                RoundGraph.threatModel(0.3, 0.0, "curious-server"), 32.1, 1))
        .isEqualTo(26);
  }

  @Test
  void aTargetEpsilonIsPlannedByTheRenyiAccountantAndNeverExceeded() {
    JobSpec spec = parse("targetEpsilon: 8\n  plannedRounds: 50", ", bitsPerCoordinate: 16");
    PrivacyLedger ledger =
        PrivacyLedger.of(spec.roundCharge().event(spec.privacy().noiseMultiplier(), 50));
    assertThat(Accountant.named("rdp").epsilon(ledger, 1e-5).epsilon()).isLessThanOrEqualTo(8);
    assertThat(spec.distributedNoise().bits()).isEqualTo(16);
    // Only the Renyi accountant may compose it.
    assertThatThrownBy(() -> Accountant.named("pld").epsilon(ledger, 1e-5))
        .hasMessageContaining("use the rdp accountant");
    assertThatThrownBy(() -> Accountant.named("basic").epsilon(ledger, 1e-5))
        .hasMessageContaining("use the rdp accountant");
  }

  @Test
  void refusesWhatItsAccountingDoesNotCover() {
    assertThatThrownBy(() -> parse("noiseMultiplier: 1.0\n  accountant: pld", ""))
        .hasMessageContaining("privacy.accountant must be rdp with mechanism");
    assertThatThrownBy(
            () -> parse("noiseMultiplier: 1.0\n  sampling: {mode: server-poisson, rate: 0.5}", ""))
        .hasMessageContaining("privacy.sampling must be absent");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    SPEC.formatted("noiseMultiplier: 1.0", "")
                        .replace("aggregation: {mode: secure}", "")))
        .hasMessageContaining("distributed-discrete-gaussian needs aggregation.mode: secure");
    assertThatThrownBy(() -> parse("noiseMultiplier: 1.0", ", bitsPerCoordinate: 8"))
        .hasMessageContaining("raise aggregation.bitsPerCoordinate or lower rounds.maxClients");
    // 999,975 shares to draw over 1,024 coordinates when only the gate's 25 inputs arrive.
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    SPEC.formatted("noiseMultiplier: 1.0", ", bitsPerCoordinate: 32")
                        .replace("maxClients: 200", "maxClients: 1000000")))
        .hasMessageContaining("rounds.maxClients 1000000 is too far above")
        .hasMessageContaining("lower rounds.maxClients toward rounds.expectedClients");
    assertThatThrownBy(() -> parse("noiseMultiplier: 0", ""))
        .hasMessageContaining("privacy.noiseMultiplier must be > 0 with mechanism");
    assertThatThrownBy(() -> parse("noiseMultiplier: 1.0e7", ""))
        .hasMessageContaining("lower privacy.noiseMultiplier");
    assertThatThrownBy(() -> parse("noiseMultiplier: 1.0", ", bitsPerCoordinate: 40"))
        .hasMessageContaining("bitsPerCoordinate");
    assertThatThrownBy(
            () ->
                JobSpecReader.parse(
                    "t",
                    SPEC.formatted("noiseMultiplier: 1.0", ", bitsPerCoordinate: 16")
                        .replace("mechanism: distributed-discrete-gaussian", "")))
        .hasMessageContaining("bitsPerCoordinate is read only with privacy.mechanism");
  }
}
