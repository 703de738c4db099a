package dev.privagg.client.train;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.client.data.Dataset;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.PrivateTopK;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LocalTrainerTest {
  private final Model model = new SoftmaxRegression(3, 2);

  private static Dataset huge(int n) {
    double[][] x = new double[n][];
    int[] y = new int[n];
    for (int i = 0; i < n; i++) {
      x[i] = new double[] {1e6 * (i + 1), -1e6, 1e6}; // gradients far above any clip norm
      y[i] = i % 2;
    }
    return new Dataset("huge", x, y, 2);
  }

  @Test
  void dpSgd_boundsEveryExamplesContribution_byTheClipNorm() {
    // One step with the whole batch (q = 1) and no noise: the update is -lr/n * sum of clipped
    // per-example gradients, so its norm is at most lr * C however large the gradients are.
    int n = 8;
    double clip = 0.5;
    double lr = 0.1;
    TrainingOptions options =
        new TrainingOptions(1, n, lr, new TrainingOptions.DpSgd(clip, 1.0, 1e-5), null, null, 1.0);
    LocalTrainer.Result result =
        LocalTrainer.train(
            model,
            model.zeros(),
            huge(n),
            options,
            new SplittableRandom(1),
            NoiseSource.zero().forRound("t", 1));
    assertThat(norm(result.update())).isLessThanOrEqualTo(lr * clip * (1 + 1e-6)).isGreaterThan(0);
    // Without clipping the same step is enormous.
    LocalTrainer.Result plain =
        LocalTrainer.train(
            model,
            model.zeros(),
            huge(n),
            TrainingOptions.sgd(1, n, lr),
            new SplittableRandom(1),
            NoiseSource.zero().forRound("t", 1));
    assertThat(norm(plain.update())).isGreaterThan(1e3);
  }

  @Test
  void dpSgd_reportsItsStepsToTheLocalAccountant() {
    TrainingOptions options =
        new TrainingOptions(2, 4, 0.1, new TrainingOptions.DpSgd(1.0, 1.1, 1e-5), null, null, 1.0);
    LocalTrainer.Result result =
        LocalTrainer.train(
            model,
            model.zeros(),
            huge(16),
            options,
            new SplittableRandom(1),
            NoiseSource.seeded(1).forRound("t", 1));
    assertThat(result.dpSgdEvent().samplingRate()).isEqualTo(0.25);
    assertThat(result.dpSgdEvent().count()).isEqualTo(8); // 2 epochs x 16/4 steps
    assertThat(result.dpSgdEpsilon()).isFinite().isPositive();
  }

  @Test
  void sparsify_keepsTheLargestFraction() {
    float[][] update = {{0.1f, -5f, 0.2f}, {3f, -0.05f}};
    LocalTrainer.sparsify(update, 0.4);
    assertThat(update[0]).containsExactly(0f, -5f, 0f);
    assertThat(update[1]).containsExactly(3f, 0f);
  }

  @Test
  void localNoise_clipsThenAddsCalibratedNoise() {
    TrainingOptions options =
        new TrainingOptions(
            1, 4, 1.0, null, new TrainingOptions.LocalNoise(1.0, 1e-5, 0.1), null, 1.0);
    LocalTrainer.Result result =
        LocalTrainer.train(
            model,
            model.zeros(),
            huge(4),
            options,
            new SplittableRandom(1),
            NoiseSource.zero().forRound("t", 1));
    assertThat(norm(result.update())).isLessThanOrEqualTo(0.1); // zero noise: only the clip shows
  }

  @Test
  void privateTopK_sendsKCoordinatesWithinTheBound() {
    TrainingOptions options =
        new TrainingOptions(1, 4, 1.0, null, null, new PrivateTopK(2, 0.05, 5.0, 0.5), 1.0);
    LocalTrainer.Result result =
        LocalTrainer.train(
            model,
            model.zeros(),
            huge(4),
            options,
            new SplittableRandom(1),
            NoiseSource.seeded(3).forRound("t", 1));
    long nonZero = 0;
    for (float[] t : result.update()) {
      for (float v : t) {
        assertThat(Math.abs(v)).isLessThanOrEqualTo(0.05f);
        nonZero += v != 0 ? 1 : 0;
      }
    }
    assertThat(nonZero).isEqualTo(2);
  }

  private static double norm(float[][] update) {
    double sq = 0;
    for (float[] t : update) {
      for (float v : t) {
        sq += (double) v * v;
      }
    }
    return Math.sqrt(sq);
  }
}
