package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.client.train.Model;
import dev.privagg.client.train.TrainingOptions;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import org.junit.jupiter.api.Test;

/** The simulation's job spec and who trains each round, without a broker. */
class SimulationTest {
  static SimulationConfig digits(String sampling, int clients, int cohort, double z) {
    return SimulationConfig.builder()
        .dataset("digits")
        .model("softmax")
        .hidden(0)
        .clients(clients)
        .expectedClients(cohort)
        .sampling(sampling)
        .rounds(5)
        .partition("iid")
        .alpha(0.5)
        .noiseMultiplier(z)
        .delta(1e-5)
        .clipNorm(1.0)
        .serverOptimizer(ServerOptimizer.sgd(1.0))
        .training(TrainingOptions.sgd(1, 8, 0.5))
        .roundTimeoutMillis(1000)
        .noiseSource("seeded")
        .seed(3)
        .build();
  }

  private static JobSpec spec(SimulationConfig config) {
    return JobSpecReader.parse(
        "test", Simulation.specYaml(config, Model.named("softmax", 64, 10, 0)));
  }

  @Test
  void clientSampling_declaresTheRate_andTheJobDoesNotSample() {
    JobSpec spec = spec(digits("client", 6000, 200, 1.0));
    JobSpec.Sampling sampling = spec.privacy().sampling();
    assertThat(sampling.mode()).isEqualTo("declared-client-poisson");
    assertThat(sampling.declared()).isTrue();
    assertThat(sampling.populationSize()).isEqualTo(6000);
    assertThat(sampling.expectedCohort()).isEqualTo(200);
    assertThat(sampling.accountingRate()).isEqualTo(200.0 / 6000);
    // The denominator is the data-independent expected cohort, and rounds end at the deadline:
    // an early close at m would be charged replace-one, without amplification.
    assertThat(spec.rounds().expectedClients()).isEqualTo(200);
    assertThat(spec.rounds().closeEarly()).isFalse();
    assertThat(spec.roundCharge().adjacency()).isEqualTo("add-remove-one");
    assertThat(spec.roundCharge().samplingRate()).isEqualTo(200.0 / 6000);
  }

  @Test
  void serverSampling_staysServerPoisson() {
    JobSpec spec = spec(digits("server", 100, 20, 1.0));
    assertThat(spec.privacy().sampling().mode()).isEqualTo("server-poisson");
    assertThat(spec.privacy().sampling().rate()).isEqualTo(0.2);
  }

  @Test
  void clientSampling_onlyTheSampledClientsTrain() {
    SimulationConfig config = digits("client", 6000, 200, 1.0);
    ClientSampling sampling = new ClientSampling(config.samplingRate(), config.seed());
    for (long round = 1; round <= 3; round++) {
      int[] participants = Simulation.participants(config, sampling, null, round);
      assertThat(participants).isEqualTo(sampling.cohort(6000, round));
      assertThat(participants.length).isBetween(130, 270); // 200 +- 5 sd of Binomial(6000, 1/30)
    }
    assertThat(Simulation.participants(config, sampling, null, 1))
        .isNotEqualTo(Simulation.participants(config, sampling, null, 2));
  }

  @Test
  void checkInSampling_theScheduleTrains_andTheJobNeitherSamplesNorAmplifies() {
    SimulationConfig config =
        digits("checkin", 600, 20, 1.0).toBuilder()
            .minSeparation(10)
            .maxParticipations(2)
            .rounds(20)
            .build();
    CheckInSampling.Schedule schedule = config.checkIns().schedule(20);
    ClientSampling unused = new ClientSampling(config.samplingRate(), config.seed());
    for (long round = 1; round <= 20; round++) {
      assertThat(Simulation.participants(config, unused, schedule, round))
          .isEqualTo(schedule.cohort(round))
          .hasSize(20);
    }
    JobSpec spec = spec(config);
    assertThat(spec.privacy().sampling().mode()).isEqualTo("none");
    assertThat(spec.roundCharge().samplingRate()).isEqualTo(1.0);
    assertThat(spec.rounds().expectedClients()).isEqualTo(20);
  }

  @Test
  void bltMechanism_needsCheckInsAndSeededNoise() {
    assertThatThrownBy(() -> digits("client", 600, 20, 1.0).toBuilder().mechanism("blt").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mechanism blt needs sampling checkin");
    assertThatThrownBy(
            () ->
                digits("checkin", 600, 20, 1.0).toBuilder()
                    .mechanism("blt")
                    .noiseSource("secure")
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mechanism blt needs noiseSource seeded");
  }

  @Test
  void bltMechanism_writesTheSchemaAndPlannedRoundsIntoTheSpec() {
    SimulationConfig config =
        digits("checkin", 600, 20, 1.0).toBuilder()
            .noiseMultiplier(Double.NaN)
            .targetEpsilon(4.0)
            .minSeparation(10)
            .maxParticipations(2)
            .mechanism("blt")
            .build();
    String yaml = Simulation.specYaml(config, Model.named("softmax", 64, 10, 0));
    assertThat(yaml)
        .contains("mechanism: blt")
        .contains("blt: {minSeparation: 10, maxParticipations: 2, buffers: 3}")
        .contains("plannedRounds: 5")
        .contains("targetEpsilon: 4.0")
        .contains("sampling: {mode: none}")
        .contains("{source: seeded, seed: 3}");
  }

  @Test
  void serverSampling_everyClientTrains() {
    SimulationConfig config = digits("server", 100, 20, 1.0);
    ClientSampling sampling = new ClientSampling(config.samplingRate(), config.seed());
    assertThat(Simulation.participants(config, sampling, null, 4)).hasSize(100).startsWith(0, 1, 2);
  }

  @Test
  void adaptiveClippingAndAdam_reachTheJobSpec() {
    SimulationConfig planned =
        digits("server", 100, 20, 1.0).toBuilder()
            .adaptiveClipping(new SimulationConfig.AdaptiveClipping(0.5, 0.2, 1.5))
            .serverOptimizer(ServerOptimizer.adam(0.03, 0.9, 0.99, 1e-3))
            .noiseMultiplier(Double.NaN)
            .targetEpsilon(4.0)
            .clipNorm(0.1)
            .build();
    JobSpec spec = spec(planned);
    AdaptiveClipping adaptive = spec.privacy().adaptiveClipping();
    assertThat(adaptive).isNotNull();
    assertThat(adaptive.targetQuantile()).isEqualTo(0.5);
    assertThat(adaptive.learningRate()).isEqualTo(0.2);
    assertThat(adaptive.initialClipNorm()).isEqualTo(0.1);
    assertThat(adaptive.countNoiseStd()).isEqualTo(1.5);
    assertThat(spec.privacy().clipNorm()).isEqualTo(0.1);
    assertThat(spec.serverOptimizer()).isEqualTo(ServerOptimizer.adam(0.03, 0.9, 0.99, 1e-3));
    assertThat(spec.privacy().targetEpsilon()).isEqualTo(4.0);
  }

  @Test
  void adaptiveClipping_atTheSameEpsilon_plansMoreSumNoise() {
    SimulationConfig fixed =
        digits("server", 100, 20, 1.0).toBuilder()
            .rounds(20)
            .noiseMultiplier(Double.NaN)
            .targetEpsilon(4.0)
            .clipNorm(0.1)
            .build();
    SimulationConfig adaptive =
        fixed.toBuilder()
            .adaptiveClipping(new SimulationConfig.AdaptiveClipping(0.5, 0.2, Double.NaN))
            .build();
    double zFixed = spec(fixed).privacy().noiseMultiplier();
    JobSpec adaptiveSpec = spec(adaptive);
    // The count's noise defaults to m / 20 = 1 and is charged with the sum (Andrew et al. 2021).
    assertThat(adaptiveSpec.privacy().adaptiveClipping().countNoiseStd()).isEqualTo(1.0);
    assertThat(adaptiveSpec.privacy().noiseMultiplier()).isGreaterThan(zFixed);
  }

  @Test
  void fixedClipAndSgd_writeTheServerSection_withTheLearningRateOnly() {
    SimulationConfig avgm =
        digits("server", 100, 20, 1.0).toBuilder()
            .serverOptimizer(ServerOptimizer.avgm(0.5, 0.8))
            .build();
    assertThat(Simulation.serverYaml(ServerOptimizer.sgd(2)))
        .isEqualTo("{optimizer: sgd, learningRate: 2.0}");
    assertThat(spec(digits("server", 100, 20, 1.0)).serverOptimizer())
        .isEqualTo(ServerOptimizer.sgd(1.0));
    assertThat(spec(digits("server", 100, 20, 1.0)).privacy().adaptiveClipping()).isNull();
    assertThat(spec(avgm).serverOptimizer()).isEqualTo(ServerOptimizer.avgm(0.5, 0.8));
  }

  @Test
  void unknownSampling_isRefused() {
    assertThatThrownBy(() -> digits("device", 100, 20, 1.0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sampling must be one of [server, client, checkin], was 'device'");
  }

  @Test
  void toBuilder_buildsAnEqualCopy() {
    SimulationConfig config =
        digits("client", 6000, 200, 1.0).toBuilder()
            .adaptiveClipping(new SimulationConfig.AdaptiveClipping(0.5, 0.2, 1.5))
            .build();
    assertThat(config.toBuilder().build()).isEqualTo(config);
    assertThat(config.nonPrivate().noiseMultiplier()).isZero();
    assertThat(config.nonPrivate().toBuilder().noiseMultiplier(1.0).build()).isEqualTo(config);
  }

  @Test
  void builder_withoutADataset_isRefused_namingTheField() {
    SimulationConfig.Builder noDataset = digits("server", 100, 20, 1.0).toBuilder().dataset(null);
    assertThatThrownBy(noDataset::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dataset must be given, was null");
  }

  @Test
  void builder_withNeitherNoiseNorTarget_isRefused_namingTheTarget() {
    SimulationConfig.Builder unplanned =
        digits("server", 100, 20, 1.0).toBuilder().noiseMultiplier(Double.NaN);
    assertThatThrownBy(unplanned::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("targetEpsilon must be > 0 and finite, was NaN");
  }

  @Test
  void builder_withACohortAboveTheClients_isRefused_namingBoth() {
    assertThatThrownBy(() -> digits("server", 10, 20, 1.0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expectedClients must be <= clients (10), was 20");
  }
}
