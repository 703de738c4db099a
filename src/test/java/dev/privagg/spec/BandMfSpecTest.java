package dev.privagg.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.bandmf.AmplifiedBandMf;
import dev.privagg.correlated.BandedOptimizer;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.Workload;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyLedger;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** {@code privacy.mechanism: bandmf}: what it plans, derives and refuses. */
class BandMfSpecTest {
  private static final String BANDMF =
      """
      jobId: band-job
      model:
        tensors: [{name: w, shape: [4]}]
      rounds:
        timeout: 2s
        expectedClients: 20
        maxClients: 1000
      privacy:
        clipNorm: 1.0
        delta: 1e-5
        budgetEpsilon: 10
        accountant: rdp
        mechanism: bandmf
        bandmf: {population: 600, bands: 4}
        plannedRounds: 60
        targetEpsilon: 4
        noise: {source: seeded, seed: 1}
      """;

  private static JobSpec parse(String yaml) {
    return JobSpecReader.parse("t", yaml);
  }

  @Test
  void givenBands_samplesWithinTheGroup_andPlansZForCeilNOverBParticipations() {
    JobSpec spec = parse(BANDMF);
    JobSpec.Correlated c = spec.privacy().correlated();
    assertThat(c.banded()).isTrue();
    assertThat(c.bandCoefficients()).hasSize(4);
    assertThat(c.minSeparation()).isEqualTo(4);
    assertThat(c.maxParticipations()).isEqualTo(15);
    // q = m / floor(N / b) = 20 / 150.
    assertThat(spec.privacy().sampling().mode()).isEqualTo("server-poisson");
    assertThat(spec.privacy().sampling().rate()).isEqualTo(20.0 / 150);
    double z = spec.privacy().noiseMultiplier();
    double epsilon =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(new AmplifiedBandMf(z, 20.0 / 150, 60, 4).event()), 1e-5)
            .epsilon();
    assertThat(epsilon).isLessThanOrEqualTo(4).isGreaterThan(3.999);
    assertThat(spec.mechanism(1.0).sigma()).isEqualTo(z);
  }

  // 61 rounds in 4 bands: group 0 has ceil(61 / 4) = 16 rounds, and z is planned for 16.
  @Test
  void givenBands_roundsNotAMultiple_planForTheLargestGroupsRounds() {
    JobSpec spec = parse(BANDMF.replace("plannedRounds: 60", "plannedRounds: 61"));
    assertThat(spec.privacy().correlated().maxParticipations()).isEqualTo(16);
    double z = spec.privacy().noiseMultiplier();
    AmplifiedBandMf run = new AmplifiedBandMf(z, 20.0 / 150, 61, 4);
    assertThat(run.participations()).isEqualTo(16);
    double epsilon = Accountant.named("rdp").epsilon(PrivacyLedger.of(run.event()), 1e-5).epsilon();
    assertThat(epsilon).isLessThanOrEqualTo(4).isGreaterThan(3.999);
  }

  @Test
  void noBands_plansThem_neverWorseThanOneBand() {
    JobSpec spec = parse(BANDMF.replace("population: 600, bands: 4", "population: 600"));
    assertThat(spec.privacy().correlated()).isNotNull();
    assertThat(spec.privacy().correlated().minSeparation()).isBetween(2, 30);
  }

  // FedAvgM releases the prefix sums of its momentum buffer: the bands are optimized for that
  // workload, SGD's (and Adam's, which is not linear) for the plain prefix sums.
  @Test
  void serverMomentum_plansTheBandsForTheMomentumWorkload() {
    String avgm = BANDMF + "server: {optimizer: avgm, learningRate: 0.2, momentum: 0.9}\n";
    double[] withMomentum = parse(avgm).privacy().correlated().bandCoefficients();
    assertThat(withMomentum)
        .containsExactly(
            BandedOptimizer.optimize(60, 4, ErrorKind.MEAN, new Workload(0.9)).coefficients());
    double[] sgd = parse(BANDMF).privacy().correlated().bandCoefficients();
    assertThat(sgd)
        .containsExactly(BandedOptimizer.optimize(60, 4, ErrorKind.MEAN).coefficients())
        .isNotEqualTo(withMomentum);
    assertThat(
            parse(BANDMF + "server: {optimizer: adam, learningRate: 0.01}\n")
                .privacy()
                .correlated()
                .bandCoefficients())
        .containsExactly(sgd);
  }

  // What a restore refused for a re-planned strategy tells the operator to pin: the coefficients
  // and z the state records, printed as Java prints them, give back the same C and z.
  @Test
  void pinningTheRecordedCoefficientsAndZ_givesBackThePlannedStrategy() {
    JobSpec planned = parse(BANDMF.replace("bands: 4", "bands: 7"));
    double[] c = planned.privacy().correlated().bandCoefficients();
    double z = planned.privacy().noiseMultiplier();
    JobSpec pinned =
        parse(
            BANDMF
                .replace("bands: 4", "bands: 7, coefficients: " + Arrays.toString(c))
                .replace("targetEpsilon: 4", "noiseMultiplier: " + z));
    assertThat(pinned.privacy().correlated().bandCoefficients()).isEqualTo(c);
    assertThat(pinned.privacy().noiseMultiplier()).isEqualTo(z);
    assertThat(pinned.privacy().sampling()).isEqualTo(planned.privacy().sampling());
  }

  // Band 1 is DP-FedAvg: the spec the job runs is the independent-noise spec with the server's
  // Poisson sampling at m / N, field for field, so its releases are those of DP-FedAvg bit for bit.
  @Test
  void oneBand_isExactlyDpFedAvgWithServerPoisson() {
    JobSpec band = parse(BANDMF.replace("bands: 4", "bands: 1"));
    JobSpec dpFedAvg =
        parse(
            BANDMF
                .replace(
                    "mechanism: bandmf\n",
                    "sampling: {mode: server-poisson, rate: 0.03333333333333333}\n")
                .replace("  bandmf: {population: 600, bands: 4}\n", ""));
    assertThat(band.privacy().sampling().rate()).isEqualTo(20.0 / 600);
    assertThat(band.privacy()).isEqualTo(dpFedAvg.privacy());
    assertThat(band).usingRecursiveComparison().isEqualTo(dpFedAvg);
  }

  @Test
  void refusals_nameTheKeyAndTheFix() {
    assertThatThrownBy(() -> parse(BANDMF.replace("bands: 4", "bands: 31")))
        .isInstanceOf(SpecException.class)
        .hasMessageContaining("privacy.bandmf.bands")
        .hasMessageContaining("30");
    assertThatThrownBy(
            () ->
                parse(BANDMF.replace("bandmf: {population: 600, bands: 4}", "bandmf: {bands: 4}")))
        .hasMessageContaining("privacy.bandmf.population")
        .hasMessageContaining("is required");
    assertThatThrownBy(
            () ->
                parse(
                    BANDMF.replace(
                        "mechanism: bandmf",
                        "mechanism: bandmf\n  sampling: {mode: server-poisson, rate: 0.1}")))
        .hasMessageContaining("privacy.sampling")
        .hasMessageContaining("samples each round's group itself");
    assertThatThrownBy(() -> parse(BANDMF.replace("source: seeded, seed: 1", "source: secure")))
        .hasMessageContaining("privacy.noise.source")
        .hasMessageContaining("bandmf");
    assertThatThrownBy(() -> parse(BANDMF.replace("accountant: rdp", "accountant: basic")))
        .hasMessageContaining("privacy.accountant");
    assertThatThrownBy(
            () -> parse(BANDMF.replace("bands: 4}", "bands: 3, coefficients: [1, 0.5]}")))
        .hasMessageContaining("privacy.bandmf.bands")
        .hasMessageContaining("must match coefficients' length 2");
    assertThatThrownBy(() -> parse(BANDMF.replace("bands: 4}", "coefficients: [1, 1000]}")))
        .hasMessageContaining("privacy.bandmf.coefficients")
        .hasMessageContaining("its inverse grows");
    // The review's case: finite, but C^-1's coefficients reach 1e60 over 200 rounds.
    assertThatThrownBy(
            () ->
                parse(
                    BANDMF
                        .replace("bands: 4}", "coefficients: [1, 2]}")
                        .replace("plannedRounds: 60", "plannedRounds: 200")))
        .hasMessageContaining("above independent noise's");
    // Noise buffers over all blocks: (b - 1) d <= 2^28 values, so 2^26 parameters take 5 bands.
    assertThatThrownBy(
            () ->
                parse(
                    BANDMF
                        .replace("shape: [4]", "shape: [67108864]")
                        .replace("bands: 4", "bands: 6")))
        .hasMessageContaining("privacy.bandmf.bands must be in [1, 5]")
        .hasMessageContaining("2 GiB");
    // One block's buffers are one state value: (b - 1) ceil(d / blocks) <= 2^27. One block of
    // 2^22 parameters takes 33 bands (the 2^28 over all blocks would allow 65).
    assertThatThrownBy(
            () ->
                parse(
                    BANDMF
                        .replace("shape: [4]", "shape: [4194304]")
                        .replace("population: 600", "population: 60000")
                        .replace("bands: 4", "bands: 34, noiseBlocks: 1")))
        .hasMessageContaining("privacy.bandmf.bands must be in [1, 33]")
        .hasMessageContaining("raise noiseBlocks");
    // Groups of 150 on average, binomial: 150 + 6 sqrt(150) = 223.5.
    assertThatThrownBy(() -> parse(BANDMF.replace("maxClients: 1000", "maxClients: 200")))
        .hasMessageContaining("rounds.maxClients must be at least 224 with mechanism bandmf");
    assertThatThrownBy(() -> parse(BANDMF.replace("mechanism: bandmf", "mechanism: blt")))
        .hasMessageContaining("privacy.bandmf")
        .hasMessageContaining("read only with privacy.mechanism: bandmf");
  }
}
