package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.GlobalModel;
import dev.privagg.client.ClientUpdates;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * (a) With noise multiplier 0 and an infinite budget, each released model equals the exact clipped
 * mean, computed here independently, to float precision; at parallelism 1 and 2.
 */
class ExactAggregationIT extends KafkaFlinkTestBase {
  private static final int CLIENTS = 12;
  private static final int M = 10;
  private static final double C = 1.0;
  private static final double LR = 0.5;

  @ParameterizedTest(name = "parallelism {0}")
  @ValueSource(ints = {1, 2})
  void releasedModels_equalTheExactClippedMean(int parallelism) throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [8, 4]}
                - {name: b, shape: [4]}
            rounds:
              timeout: 4s
              expectedClients: %d
            privacy:
              clipNorm: %s
              noiseMultiplier: 0
              delta: 1.0e-5
              budgetEpsilon: .inf
            serverLearningRate: %s
            """
                .formatted(M, C, LR));
    startJob(spec, parallelism);
    assertThat(weights(awaitModel(spec, 0))).containsOnly(0f);

    Random random = new Random(parallelism);
    double[] expected = new double[36];
    for (long round = 1; round <= 2; round++) {
      awaitRound(spec, round);
      List<byte[]> updates = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        float[][] tensors = {new float[32], new float[4]};
        double scale = c % 3 == 0 ? 2.0 : 0.05; // a third of the clients are clipped
        double sq = 0;
        for (float[] t : tensors) {
          for (int i = 0; i < t.length; i++) {
            t[i] = (float) (random.nextGaussian() * scale);
            sq += (double) t[i] * t[i];
          }
        }
        double factor = Math.min(1, C / Math.sqrt(sq));
        for (int i = 0; i < 36; i++) {
          float v = i < 32 ? tensors[0][i] : tensors[1][i - 32];
          expected[i] += LR * v * factor / M;
        }
        updates.add(ClientUpdates.encode(spec, round, "client-" + c, tensors));
      }
      produce(spec.topics().updates(), null, updates.toArray(new byte[0][]));
      GlobalModel model = awaitModel(spec, round);
      float[] actual = weights(model);
      for (int i = 0; i < 36; i++) {
        assertThat((double) actual[i])
            .as("round %d coordinate %d", round, i)
            .isCloseTo(expected[i], within(1e-5));
      }
      assertThat(model.getPrivacy().getEpsilon()).isInfinite();
      assertThat(model.getPrivacy().getNoiseMultiplier()).isZero();
    }
  }
}
