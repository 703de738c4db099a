package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.client.data.Datasets;
import dev.privagg.client.train.Metrics;
import dev.privagg.client.train.Model;
import dev.privagg.optimizer.ServerOptimizer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The central baseline: the same model and trainer on the pooled data. */
class CentralTest {
  @Test
  void centralTraining_onPooledDigits_learnsWellAboveChance() {
    List<Central.Epoch> seen = new ArrayList<>();
    Central.Result result =
        Central.train(SimulationTest.digits("client", 100, 20, 1.0), 3, 16, 0.1, seen::add);
    assertThat(seen).extracting(Central.Epoch::epoch).containsExactly(1, 2, 3);
    assertThat(result.epochs()).isEqualTo(seen);
    assertThat(result.testSize()).isEqualTo(359); // 20% of Digits' 1,797 examples
    // Softmax regression on Digits reaches about 0.95; the round-0 model (zeros) is at chance.
    assertThat(result.finalAccuracy()).isGreaterThan(0.85);
    assertThat(result.finalAccuracy()).isEqualTo(seen.get(2).accuracy());
  }

  @Test
  void centralTraining_startsFromTheJobsRoundZeroModel() {
    SimulationConfig mlp =
        SimulationConfig.builder()
            .dataset("digits")
            .model("mlp")
            .hidden(8)
            .clients(10)
            .expectedClients(5)
            .sampling("client")
            .rounds(1)
            .partition("iid")
            .alpha(0.5)
            .noiseMultiplier(1.0)
            .delta(1e-5)
            .clipNorm(1.0)
            .serverOptimizer(ServerOptimizer.sgd(1.0))
            .training(dev.privagg.client.train.TrainingOptions.sgd(1, 8, 0.5))
            .roundTimeoutMillis(1000)
            .noiseSource("seeded")
            .seed(3)
            .build();
    Model model = Model.named("mlp", 64, 10, 8);
    float[] init =
        dev.privagg.spec.JobSpecReader.parse("t", Simulation.specYaml(mlp, model)).initialWeights();
    double[][] tensors = Central.split(init, new int[] {64 * 8, 8, 8 * 10, 10});
    assertThat(tensors[0][0]).isEqualTo(init[0]);
    assertThat(tensors[1][0]).isEqualTo(init[64 * 8]);
    assertThat(tensors[3][9]).isEqualTo(init[init.length - 1]);
    assertThat(init[0]).isNotZero(); // random init with the simulation's seed, as the job has it
    Datasets.Split data = Datasets.load("digits", 3);
    assertThat(Metrics.accuracy(model, tensors, data.test())).isLessThan(0.5);
  }

  @Test
  void baseline_trainsOncePerSeed_fromTheBaseSeedOn_withATIntervalOverSeeds() {
    List<Long> seeds = new ArrayList<>();
    CentralBaseline baseline =
        CentralBaseline.train(
            SimulationTest.digits("client", 100, 20, 1.0),
            2,
            1,
            16,
            0.1,
            (seed, epoch) -> seeds.add(seed));
    assertThat(seeds).containsExactly(3L, 4L); // digits(...) has seed 3
    assertThat(baseline.runs()).hasSize(2);
    assertThat(baseline.epochs()).isEqualTo(1);
    assertThat(baseline.accuracy().kind()).isEqualTo("t over 2 seeds");
    assertThat(baseline.accuracy().mean())
        .isEqualTo(
            (baseline.runs().get(0).finalAccuracy() + baseline.runs().get(1).finalAccuracy()) / 2);
  }

  @Test
  void zeroEpochs_isRefused() {
    assertThatThrownBy(
            () -> Central.train(SimulationTest.digits("client", 100, 20, 1.0), 0, 16, 0.1, e -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("epochs must be >= 1, was 0");
  }
}
