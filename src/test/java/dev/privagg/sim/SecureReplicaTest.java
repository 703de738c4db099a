package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.client.train.TrainingOptions;
import dev.privagg.optimizer.ServerOptimizer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory rounds of a job: the secure variants release what the plaintext job does. */
class SecureReplicaTest {
  static SimulationConfig.Builder digits(double z) {
    return SimulationConfig.builder()
        .dataset("digits")
        .model("softmax")
        .clients(300)
        .expectedClients(300)
        .sampling("server")
        .rounds(3)
        .partition("iid")
        .noiseMultiplier(z)
        .delta(1e-5)
        .clipNorm(1.0)
        .serverOptimizer(ServerOptimizer.sgd(1.0))
        .training(TrainingOptions.sgd(1, 8, 0.5))
        .roundTimeoutMillis(8000)
        .noiseSource("seeded")
        .seed(5);
  }

  private static double distance(float[] a, float[] b) {
    double squares = 0;
    for (int i = 0; i < a.length; i++) {
      squares += (a[i] - b[i]) * (double) (a[i] - b[i]);
    }
    return Math.sqrt(squares);
  }

  private static double norm(float[] a) {
    return distance(a, new float[a.length]);
  }

  @Test
  void distributedNoise_atLittleNoise_releasesThePlaintextModel_toTheGridsPrecision() {
    SimulationConfig plain = digits(0.01).build();
    SimulationConfig distributed =
        digits(0.01)
            .secureAggregation(true)
            .mechanism("distributed-discrete-gaussian")
            .bitsPerCoordinate(32)
            .build();
    List<SecureReplica.Round> seen = new ArrayList<>();
    SecureReplica.Result a = SecureReplica.run(plain, r -> {});
    SecureReplica.Result b = SecureReplica.run(distributed, seen::add);
    assertThat(seen).extracting(SecureReplica.Round::round).containsExactly(1L, 2L, 3L);
    assertThat(seen).allMatch(SecureReplica.Round::summed);
    // Three steps of at most C / m * 300 = C each; noise z C / m and the 32-bit grid's rounding
    // move the model by well under 1% of that. A decoding slip (rotation, scale, sign) moves it
    // by the model's own size.
    assertThat(norm(a.finalWeights())).isGreaterThan(0.5);
    assertThat(distance(a.finalWeights(), b.finalWeights()))
        .isLessThan(0.01 * norm(a.finalWeights()));
    assertThat(b.finalAccuracy())
        .isCloseTo(a.finalAccuracy(), org.assertj.core.data.Offset.offset(0.02));
  }

  @Test
  void noiseOfTheSum_isTheSharesOfEveryClient_aboveTheCentralJobs() {
    SimulationConfig distributed =
        digits(2)
            .secureAggregation(true)
            .mechanism("distributed-discrete-gaussian")
            .bitsPerCoordinate(18)
            .build();
    var spec = Simulation.plannedSpec(distributed);
    double std = SecureReplica.noiseStdOfSum(spec, 300);
    // Shares sized for n_min < 300 inputs: a round of all 300 carries sqrt(300 / n_min) times z.
    int shares = spec.distributedNoise().noiseShares();
    assertThat(shares).isLessThan(300);
    assertThat(std)
        .isCloseTo(
            spec.privacy().noiseMultiplier() * Math.sqrt(300.0 / shares),
            org.assertj.core.data.Percentage.withPercentage(5));
    assertThat(SecureReplica.noiseStdOfSum(Simulation.plannedSpec(digits(2).build()), 300))
        .isEqualTo(2.0);
  }

  @Test
  void dropouts_passTheGateUpToTheDeclaredRate_andSinkItBeyond() {
    SimulationConfig distributed =
        digits(2)
            .rounds(2)
            .secureAggregation(true)
            .mechanism("distributed-discrete-gaussian")
            .bitsPerCoordinate(18)
            .build();
    // The gate is set for rounds that lost the declared tenth (three of its stds below 270).
    assertThat(SecureReplica.run(distributed, 0.05, r -> {}).rounds())
        .allMatch(SecureReplica.Round::summed);
    // Half the clients gone: the noisy count falls short, the rounds release noise alone.
    assertThat(SecureReplica.run(distributed, 0.5, r -> {}).rounds())
        .noneMatch(SecureReplica.Round::summed);
  }

  @Test
  void sampledOrPartialCohorts_areRefused() {
    assertThatThrownBy(() -> SecureReplica.run(digits(1).expectedClients(30).build(), r -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the cohort all clients");
  }
}
