package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.ModelState;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import org.junit.jupiter.api.Test;

/**
 * The spec's server optimizer in the combiner, without Flink: each release steps the model along
 * the noisy average with the optimizer's moments carried from round to round in the combiner's
 * state, and a base model that did not come from that state starts them again.
 */
class ServerOptimizerRoundsTest {
  private static final String ADAM =
      "server: {optimizer: adam, learningRate: 0.1, beta1: 0.9, beta2: 0.99, tau: 0.001}";

  private final LifecycleDriver job = LifecycleDriver.releasing();

  private void start(JobSpec spec) {
    job.start(spec, NoiseSource.zero(), LedgerFloor.NONE, 0);
  }

  private void read(String client, long round, float w0, float w1, float b, long appended) {
    job.read(update(client, round, w0, w1, b), appended);
  }

  private void advanceTo(long time) {
    job.advanceTo(time);
  }

  @Test
  void adam_stepsAlongTheAverage_withMomentsCarriedAcrossRounds() {
    JobSpec spec = spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", "", ADAM);
    start(spec);
    read("a", 1, 0.2f, -0.4f, 0f, 10);
    read("b", 1, 0.2f, -0.4f, 0f, 20);
    advanceTo(TIMEOUT);
    read("a", 2, 0.2f, -0.4f, 0f, TIMEOUT + 10);
    advanceTo(2 * TIMEOUT);

    // Round 1 averages (0.4, -0.8, 0) / m = (0.2, -0.4, 0); round 2 has one member over m = 2.
    ServerOptimizer adam = ServerOptimizer.adam(0.1, 0.9, 0.99, 0.001);
    float[] expected = new float[3];
    ServerOptimizer.State moments = adam.initialState(3);
    adam.step(expected, new double[] {0.2, -0.4, 0}, moments);
    float[] afterOne = expected.clone();
    adam.step(expected, new double[] {0.1, -0.2, 0}, moments);

    assertThat(job.decided.models.get(0)).containsExactly(afterOne);
    assertThat(job.decided.models.get(1)).containsExactly(expected);
    assertThat(job.decided.combinerStore.model.optimizer.steps).isEqualTo(2);
    // Fresh moments in round 2 would give another model: the carried ones matter.
    float[] restarted = afterOne.clone();
    adam.step(restarted, new double[] {0.1, -0.2, 0}, adam.initialState(3));
    assertThat(restarted).isNotEqualTo(expected);
  }

  @Test
  void sgd_isTheLegacyServerLearningRate() {
    JobSpec legacy = spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", "", "serverLearningRate: 0.5");
    start(legacy);
    read("a", 1, 0.2f, -0.4f, 0.2f, 10);
    advanceTo(TIMEOUT);
    // model += 0.5 * (0.2, -0.4, 0.2) / 2 (norm 0.49: not clipped)
    assertThat(job.decided.models.get(0)).containsExactly(0.05f, -0.1f, 0.05f);
  }

  @Test
  void restoredStateFromBeforeOptimizers_startsTheMomentsFromZero() {
    JobSpec spec = spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", "", ADAM);
    start(spec);
    read("a", 1, 0.2f, -0.4f, 0f, 10);
    advanceTo(TIMEOUT);
    // As an earlier version's state holds it: the model without optimizer state.
    float[] afterOne = job.decided.combinerStore.model.model.clone();
    job.decided.combinerStore.model = new ModelState(afterOne.clone(), 1);
    read("a", 2, 0.2f, -0.4f, 0f, TIMEOUT + 10);
    advanceTo(2 * TIMEOUT);

    ServerOptimizer adam = ServerOptimizer.adam(0.1, 0.9, 0.99, 0.001);
    float[] expected = afterOne.clone();
    adam.step(expected, new double[] {0.1, -0.2, 0}, adam.initialState(3));
    assertThat(job.decided.models.get(1)).containsExactly(expected);
  }
}
