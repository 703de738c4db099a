package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.client.ClientUpdates;
import dev.privagg.io.FloatTensor;
import dev.privagg.io.Safetensors;
import dev.privagg.spec.JobSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A job whose spec starts from a model file, submitted as a cluster gets it ({@code --spec-base64}
 * plus the values sent with {@code --init-base64}; the file does not exist where the job runs),
 * publishes the file's values as round 0 and releases round 1 = init + lr * (sum of updates) / m
 * with a zero noise multiplier: the init values provably reach the combiner's base model. The round
 * closes at its two updates (a long timeout, so a loaded machine cannot make them late).
 */
class InitFileIT extends KafkaFlinkTestBase {
  private static final float[] W = {0.5f, -1.25f, 2f, 3.5f, -0.75f, 1f};
  private static final float[] B = {10f, -20f};
  private static final double LR = 0.5;

  @Test
  void fileInit_sentWithTheSpec_isRoundZero_andRoundOneMovesFromIt() throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [3, 2]}
                - {name: b, shape: [2]}
              init: file
              initFile: only-on-the-submitting-machine.safetensors
            rounds:
              timeout: 30s
              expectedClients: 2
              closeEarly: true
            privacy:
              clipNorm: 10.0
              noiseMultiplier: 0
              delta: 1.0e-5
              budgetEpsilon: .inf
            serverLearningRate: %s
            """
                .formatted(LR),
            Map.of(
                "w", new FloatTensor("w", new int[] {3, 2}, W),
                "b", new FloatTensor("b", new int[] {2}, B)));
    assertThat(Files.exists(Path.of("only-on-the-submitting-machine.safetensors"))).isFalse();
    startJob(spec, 1);

    float[] init = {0.5f, -1.25f, 2f, 3.5f, -0.75f, 1f, 10f, -20f};
    assertThat(weights(awaitModel(spec, 0))).containsExactly(init);

    awaitRound(spec, 1);
    float[][] first = {{1, 0, 0, 0, 0, 0}, {0, 1}};
    float[][] second = {{0, 2, 0, 0, 0, -1}, {0.5f, 0}};
    produce(
        spec.topics().updates(),
        null,
        ClientUpdates.encode(spec, 1, "client-a", first),
        ClientUpdates.encode(spec, 1, "client-b", second));

    float[] released = weights(awaitModel(spec, 1));
    float[] sum = {1, 2, 0, 0, 0, -1, 0.5f, 1};
    for (int i = 0; i < init.length; i++) {
      assertThat((double) released[i])
          .as("coordinate %d", i)
          .isCloseTo(init[i] + LR * sum[i] / 2, within(1e-6));
    }
  }

  /**
   * The spec as {@code privagg submit} sends it: its text base64-encoded, with the job's init
   * values as safetensors (in another order than the spec's), read by the job's own argument
   * reader.
   */
  private static JobSpec spec(String body, Map<String, FloatTensor> tensors) {
    String id = "it-" + UUID.randomUUID().toString().substring(0, 8);
    String text =
        ("jobId: %s\n%s\ntopics:\n  updates: %s.updates\n  models: %s.models\n  rounds: %s.rounds\n"
                + "  ledger: %s.ledger\n  rejects: %s.rejects\n")
            .formatted(id, body, id, id, id, id, id);
    byte[] sent = Safetensors.encode(List.of(tensors.get("b"), tensors.get("w")), Map.of());
    return JobArguments.readSpecs(
            List.<String[]>of(
                new String[] {
                  "--spec-base64",
                  Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8))
                }),
            Map.of(id, sent))
        .get(0);
  }
}
