package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.client.ClientUpdates;
import dev.privagg.job.decide.DeploymentNoise;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator mistake that keyed noise alone turned into an exact leak: every topic of a job
 * deleted and recreated, and the job started again with the same key, job id and topic names. Round
 * 1 then had the same noise on a new sum, and a reader who kept the old round-1 model learnt the
 * exact difference of two sums. Now the recreated topics are a new deployment with a fresh nonce,
 * while a restart on the same topics reads the nonce back from them.
 */
class DeploymentIT extends KafkaFlinkTestBase {
  private static final String KEY =
      "6465706c6f796d656e742d69742d6e6f6973652d6b65792d3031323334353637";

  @TempDir Path dir;

  @Test
  void recreatedTopics_getOtherKeyedNoise_whileARestartKeepsTheDeploymentsNonce() throws Exception {
    Path key = dir.resolve("noise.key");
    Files.writeString(key, KEY + "\n");
    String jobId = "deploy-" + UUID.randomUUID().toString().substring(0, 8);
    JobSpec spec = JobSpecReader.parse("deployment", yaml(jobId, key));
    recreateTopics(spec);

    float[] first = roundOne(spec);
    String firstNonce = nonceOf(spec, 1);
    // A fresh start on the same topics (no state) charges round 2 (taken over, or skipped when
    // its deadline passed during the restart) and releases round 3 in the same deployment.
    stopJobs();
    startJob(spec, 1);
    awaitModel(spec, 3);
    assertThat(nonceOf(spec, 2)).as("round 2's nonce, after the restart").isEqualTo(firstNonce);
    assertThat(nonceOf(spec, 3)).as("round 3's nonce, after the restart").isEqualTo(firstNonce);

    stopJobs();
    recreateTopics(spec);
    float[] second = roundOne(spec);
    String secondNonce = nonceOf(spec, 1);
    assertThat(secondNonce).isNotEqualTo(firstNonce);
    assertThat(second).isNotEqualTo(first);
    // The same members and sum: the models differ by the two deployments' noise alone, each drawn
    // from the key and its own nonce, lr * (n1 - n2) / m.
    double[] n1 = DeploymentNoise.sumNoise(spec, firstNonce, 1);
    double[] n2 = DeploymentNoise.sumNoise(spec, secondNonce, 1);
    for (int i = 0; i < first.length; i++) {
      assertThat((double) first[i] - second[i])
          .as("coordinate %d", i)
          .isCloseTo((n1[i] - n2[i]) / spec.rounds().expectedClients(), within(1e-5));
    }
  }

  /** Starts the job, sends round 1's two updates, returns round 1's model. */
  private float[] roundOne(JobSpec spec) throws Exception {
    startJob(spec, 1);
    awaitRound(spec, 1);
    produce(
        spec.topics().updates(),
        null,
        ClientUpdates.encode(spec, 1, "c1", new float[][] {{0.3f, 0.4f, 0f, 0f}}),
        ClientUpdates.encode(spec, 1, "c2", new float[][] {{0f, 0f, 0.6f, 0.8f}}));
    float[] model = weights(awaitModel(spec, 1));
    List<LedgerEntry> released =
        ledgerUntil(spec, l -> l.stream().anyMatch(e -> e.getRound() == 1), Duration.ofSeconds(30));
    assertThat(released.get(0).getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
    assertThat(released.get(0).getContributions()).isEqualTo(2);
    return model;
  }

  /** The deployment nonce of round {@code round}'s ledger entry. */
  private String nonceOf(JobSpec spec, long round) {
    LedgerEntry entry =
        ledgerUntil(
                spec, l -> l.stream().anyMatch(e -> e.getRound() == round), Duration.ofSeconds(30))
            .stream()
            .filter(e -> e.getRound() == round)
            .findFirst()
            .orElseThrow();
    assertThat(entry.getDeployment()).matches("[0-9a-f]{32}");
    return entry.getDeployment();
  }

  private static String yaml(String jobId, Path key) {
    return """
        jobId: %s
        model:
          tensors:
            - {name: w, shape: [4]}
        rounds:
          timeout: 3s
          startGrace: 3s
          expectedClients: 2
        privacy:
          clipNorm: 1.0
          noiseMultiplier: 1.0
          delta: 1.0e-5
          budgetEpsilon: 1000
          noise: {source: keyed, keyFile: %s}
        topics: {updates: %s.updates, models: %s.models, rounds: %s.rounds, ledger: %s.ledger, rejects: %s.rejects}
        """
        .formatted(jobId, key, jobId, jobId, jobId, jobId, jobId);
  }
}
