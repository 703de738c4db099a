package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.client.ClientUpdates;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Adaptive clipping with FedAdam on a real broker and a Flink MiniCluster at parallelism 2. The sum
 * noise is zero and the count noise seeded, so each released model can be recomputed here: the
 * updates clipped to the round's C (as the ledger and the model's privacy statement state it), the
 * exact mean over m, one Adam step. The ledger's next C must follow Andrew et al.'s geometric rule
 * from its noisy fraction, and the next round must clip to it.
 */
class AdaptiveClippingIT extends KafkaFlinkTestBase {
  private static final int CLIENTS = 10;
  private static final int M = 10;
  private static final double QUANTILE = 0.5;
  private static final double CLIP_LR = 0.2;
  private static final double COUNT_STD = 0.5;

  @Test
  void releasesClipToEachRoundsC_whichFollowsTheNoisyUnclippedFraction() throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [6]}
            rounds:
              timeout: 4s
              expectedClients: %d
            privacy:
              clipNorm: 0.1
              noiseMultiplier: 0
              delta: 1.0e-5
              budgetEpsilon: .inf
              adaptiveClipping: {targetQuantile: %s, learningRate: %s, countNoiseStd: %s}
              noise: {source: seeded, seed: 11}
            server: {optimizer: adam, learningRate: 0.05}
            """
                .formatted(M, QUANTILE, CLIP_LR, COUNT_STD));
    startJob(spec, 2);
    awaitModel(spec, 0);

    ServerOptimizer adam = spec.serverOptimizer();
    ServerOptimizer.State moments = adam.initialState(6);
    float[] expected = new float[6];
    Random random = new Random(3);
    double previousNext = Double.NaN;
    for (long round = 1; round <= 3; round++) {
      awaitRound(spec, round);
      List<float[]> sent = new ArrayList<>();
      List<byte[]> updates = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        float[] w = new float[6];
        double scale = 0.05 + 0.1 * c; // norms spread over about 0.1 to 2.5
        for (int i = 0; i < 6; i++) {
          w[i] = (float) (random.nextGaussian() * scale);
        }
        sent.add(w);
        updates.add(ClientUpdates.encode(spec, round, "client-" + c, new float[][] {w}));
      }
      produce(spec.topics().updates(), null, updates.toArray(new byte[0][]));
      GlobalModel model = awaitModel(spec, round);
      long r = round;
      LedgerEntry entry =
          ledgerUntil(
                  spec,
                  entries -> entries.stream().anyMatch(e -> e.getRound() == r),
                  Duration.ofSeconds(60))
              .stream()
              .filter(e -> e.getRound() == r)
              .findFirst()
              .orElseThrow();

      double c = entry.getClipNorm();
      assertThat(model.getPrivacy().getClipNorm()).isEqualTo(c);
      if (round == 1) {
        assertThat(c).isEqualTo(0.1);
      } else {
        assertThat(c).isEqualTo(previousNext);
      }
      // The model: each update clipped to this round's C, the mean over m, one Adam step.
      double[] average = new double[6];
      int unclipped = 0;
      for (float[] w : sent) {
        double norm = 0;
        for (float v : w) {
          norm += (double) v * v;
        }
        norm = Math.sqrt(norm);
        unclipped += norm <= c ? 1 : 0;
        double factor = Math.min(1, c / norm);
        for (int i = 0; i < 6; i++) {
          average[i] += w[i] * factor / M;
        }
      }
      adam.step(expected, average, moments);
      float[] actual = weights(model);
      for (int i = 0; i < 6; i++) {
        assertThat((double) actual[i])
            .as("round %d coordinate %d", round, i)
            .isCloseTo(expected[i], within(1e-5));
      }
      // The noisy fraction is the true shifted fraction plus N(0, COUNT_STD^2) / m: within 5 std
      // of it (false failure 6e-7 per round).
      double fraction = entry.getNoisyUnclippedFraction();
      double exact = (unclipped - CLIENTS / 2.0 + M / 2.0) / M;
      assertThat(fraction).isCloseTo(exact, within(5 * COUNT_STD / M));
      assertThat(entry.getNextClipNorm())
          .isCloseTo(c * Math.exp(-CLIP_LR * (fraction - QUANTILE)), within(1e-12));
      // Charged with the count: (0^-2 + (2 * 0.5)^-2)^(-1/2) is 0 for z = 0; the ledger says so.
      assertThat(entry.getChargedNoiseMultiplier()).isZero();
      previousNext = entry.getNextClipNorm();
    }
  }
}
