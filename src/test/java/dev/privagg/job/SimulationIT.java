package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.client.train.TrainingOptions;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.sim.ClientSampling;
import dev.privagg.sim.Simulation;
import dev.privagg.sim.SimulationConfig;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Simulated clients on Digits through the real broker and the job on a MiniCluster. */
class SimulationIT extends KafkaFlinkTestBase {
  private static SimulationConfig digits(double z, int clients, int cohort, int rounds) {
    return digits("server", z, clients, cohort, rounds);
  }

  private static SimulationConfig digits(
      String sampling, double z, int clients, int cohort, int rounds) {
    return SimulationConfig.builder()
        .dataset("digits")
        .model("softmax")
        .hidden(0)
        .clients(clients)
        .expectedClients(cohort)
        .sampling(sampling)
        .rounds(rounds)
        .partition("iid")
        .alpha(0.5)
        .noiseMultiplier(z)
        .delta(1e-5)
        .clipNorm(1.0)
        .serverOptimizer(ServerOptimizer.sgd(1.0))
        .training(TrainingOptions.sgd(2, 8, 0.5))
        .roundTimeoutMillis(1500)
        .noiseSource("seeded")
        .seed(3)
        .build();
  }

  @Test
  void withoutNoise_accuracyRisesWellAboveChance() throws Exception {
    List<Simulation.RoundResult> seen = new ArrayList<>();
    Simulation.Result result = Simulation.run(digits(0, 20, 20, 4), kafka.connection(), seen::add);
    assertThat(seen).hasSize(4);
    assertThat(result.finalAccuracy()).isGreaterThan(0.6); // chance is 0.1 on ten classes
    assertThat(result.epsilon()).isInfinite();
  }

  @Test
  void privacyStatement_matchesTheAccountant() throws Exception {
    double z = 1.2;
    Simulation.Result result = Simulation.run(digits(z, 20, 10, 3), kafka.connection(), r -> {});
    double expected =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(PrivacyEvent.sampledGaussian(z, 0.5, 3)), 1e-5)
            .epsilon();
    assertThat(result.epsilon()).isEqualTo(expected);
    assertThat(result.rounds()).extracting(Simulation.RoundResult::epsilon).isSorted();
    assertThat(result.spec().privacy().sampling().mode()).isEqualTo("server-poisson");
  }

  @Test
  void clientSampling_onlyTheSampledCohortSends_andIsChargedAtTheDeclaredRate() throws Exception {
    double z = 1.2;
    SimulationConfig config = digits("client", z, 40, 10, 3);
    Simulation.Result result = Simulation.run(config, kafka.connection(), r -> {});
    ClientSampling sampling = new ClientSampling(0.25, config.seed());
    assertThat(result.rounds())
        .extracting(Simulation.RoundResult::clientsSent)
        .containsExactly(
            sampling.cohort(40, 1).length,
            sampling.cohort(40, 2).length,
            sampling.cohort(40, 3).length);
    assertThat(result.spec().privacy().sampling().mode()).isEqualTo("declared-client-poisson");
    double expected =
        Accountant.named("rdp")
            .epsilon(PrivacyLedger.of(PrivacyEvent.sampledGaussian(z, 0.25, 3)), 1e-5)
            .epsilon();
    assertThat(result.epsilon()).isEqualTo(expected);
  }
}
