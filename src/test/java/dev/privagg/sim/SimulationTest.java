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
    return new SimulationConfig(
        "digits",
        "softmax",
        0,
        clients,
        cohort,
        sampling,
        5,
        "iid",
        0.5,
        z,
        Double.NaN,
        1e-5,
        1.0,
        null,
        ServerOptimizer.sgd(1.0),
        TrainingOptions.sgd(1, 8, 0.5),
        1000,
        "seeded",
        3);
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
      int[] participants = Simulation.participants(config, sampling, round);
      assertThat(participants).isEqualTo(sampling.cohort(6000, round));
      assertThat(participants.length).isBetween(130, 270); // 200 +- 5 sd of Binomial(6000, 1/30)
    }
    assertThat(Simulation.participants(config, sampling, 1))
        .isNotEqualTo(Simulation.participants(config, sampling, 2));
  }

  @Test
  void serverSampling_everyClientTrains() {
    SimulationConfig config = digits("server", 100, 20, 1.0);
    ClientSampling sampling = new ClientSampling(config.samplingRate(), config.seed());
    assertThat(Simulation.participants(config, sampling, 4)).hasSize(100).startsWith(0, 1, 2);
  }

  @Test
  void adaptiveClippingAndAdam_reachTheJobSpec() {
    SimulationConfig config =
        digits("server", 100, 20, 1.0)
            .withAdaptiveClipping(new SimulationConfig.AdaptiveClipping(0.5, 0.2, 1.5))
            .withServerOptimizer(ServerOptimizer.adam(0.03, 0.9, 0.99, 1e-3));
    SimulationConfig planned =
        new SimulationConfig(
            config.dataset(),
            config.model(),
            config.hidden(),
            config.clients(),
            config.expectedClients(),
            config.sampling(),
            config.rounds(),
            config.partition(),
            config.alpha(),
            Double.NaN,
            4.0,
            config.delta(),
            0.1,
            config.adaptiveClipping(),
            config.serverOptimizer(),
            config.training(),
            config.roundTimeoutMillis(),
            config.noiseSource(),
            config.seed());
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
        new SimulationConfig(
            "digits",
            "softmax",
            0,
            100,
            20,
            "server",
            20,
            "iid",
            0.5,
            Double.NaN,
            4.0,
            1e-5,
            0.1,
            null,
            ServerOptimizer.sgd(1.0),
            TrainingOptions.sgd(1, 8, 0.5),
            1000,
            "seeded",
            3);
    SimulationConfig adaptive =
        fixed.withAdaptiveClipping(new SimulationConfig.AdaptiveClipping(0.5, 0.2, Double.NaN));
    double zFixed = spec(fixed).privacy().noiseMultiplier();
    JobSpec adaptiveSpec = spec(adaptive);
    // The count's noise defaults to m / 20 = 1 and is charged with the sum (Andrew et al. 2021).
    assertThat(adaptiveSpec.privacy().adaptiveClipping().countNoiseStd()).isEqualTo(1.0);
    assertThat(adaptiveSpec.privacy().noiseMultiplier()).isGreaterThan(zFixed);
  }

  @Test
  void fixedClipAndSgd_writeTheServerSection_withTheLearningRateOnly() {
    SimulationConfig avgm =
        digits("server", 100, 20, 1.0).withServerOptimizer(ServerOptimizer.avgm(0.5, 0.8));
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
        .hasMessage("sampling must be one of [server, client], was 'device'");
  }
}
