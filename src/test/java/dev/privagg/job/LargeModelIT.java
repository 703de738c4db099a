package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.client.ClientUpdates;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.spec.JobSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 1,000,000-parameter model through the environment {@code privagg run} uses: its checkpoints (12
 * bytes per parameter) go to files, so they complete and the releases commit. In JobManager memory
 * (5 MiB) no checkpoint of this model completes and no release would ever be readable.
 */
class LargeModelIT extends KafkaFlinkTestBase {
  @TempDir Path stateDir;

  @Test
  void millionParameterModel_releasesCommit_withCheckpointsOnDisk() throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [1000, 1000]}
            rounds: {timeout: 6s, expectedClients: 2}
            privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}
            """);
    KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2);
    JobClient job =
        PrivaggJob.start(
            PrivaggJob.localEnvironment(stateDir),
            List.of(spec),
            new PrivaggJob.Settings(kafka.connection(), 1000, 1, System.currentTimeMillis()));
    try {
      awaitRound(spec, 1);
      float[] one = new float[1_000_000];
      one[0] = 0.6f;
      float[] two = new float[1_000_000];
      two[999_999] = 0.8f;
      produce(
          spec.topics().updates(), "c1", ClientUpdates.encode(spec, 1, "c1", new float[][] {one}));
      produce(
          spec.topics().updates(), "c2", ClientUpdates.encode(spec, 1, "c2", new float[][] {two}));
      float[] w = weights(awaitModel(spec, 1)); // read_committed
      assertThat((double) w[0]).isCloseTo(0.3, within(1e-6));
      assertThat((double) w[999_999]).isCloseTo(0.4, within(1e-6));
      try (var files = Files.walk(stateDir.resolve("checkpoints"))) {
        assertThat(files.anyMatch(p -> p.getFileName().toString().equals("_metadata"))).isTrue();
      }
    } finally {
      job.cancel().get();
    }
  }
}
