package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.GlobalModel;
import dev.privagg.io.AvroCodec;
import dev.privagg.spec.JobSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator mistake: a second Flink job serving a job id that a running job already serves (here
 * spec sets [A] and [A, B]). The newer job's first committed release stops the older job for good,
 * and the public topics never hold two payloads for one round of A. With keyed noise the newer job
 * takes A's open round over with the same window and computes the same release, so it goes on; with
 * secure noise its copy of that round would differ and it would stop too (ReleasePublisherTest).
 */
class SecondJobIT extends KafkaFlinkTestBase {
  @TempDir Path dir;

  @Test
  void aSecondJobForTheSameJobId_stopsTheFirst_andEachPublicRoundStaysUnique() throws Exception {
    Path key = dir.resolve("noise.key");
    Files.writeString(key, "7365636f6e642d6a6f622d69742d6e6f6973652d6b65792d3031323334353637\n");
    String privacy =
        "privacy: {clipNorm: 1.0, noiseMultiplier: 2.0, delta: 1.0e-5, budgetEpsilon: 1000,"
            + " noise: {source: keyed, keyFile: "
            + key
            + "}}\n";
    JobSpec a =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [4]}
            rounds: {timeout: 2s, startGrace: 1s, expectedClients: 2}
            """
                + privacy);
    JobSpec b =
        siblingSpec(
            a,
            a.jobId() + "-b",
            """
            model:
              tensors:
                - {name: w, shape: [4]}
            rounds: {timeout: 2s, startGrace: 1s, expectedClients: 2}
            """
                + privacy);
    JobClient first = startJob(a, 1);
    awaitModel(a, 2);
    JobClient second = startJob(List.of(a, b), 1);

    assertThatThrownBy(() -> first.getJobExecutionResult().get(120, TimeUnit.SECONDS))
        .hasStackTraceContaining("job id " + a.jobId() + " is now served by another Flink job");
    // The newer job goes on when it took A's open round over and computed the same release. If
    // A announced a round after B read the topics, B numbered that round with another window:
    // then B stops too rather than publish a second payload, and the operator submits one job.
    long reached = awaitLatestRound(a) + 2;
    try {
      awaitModel(a, reached);
      assertThat(second.getJobStatus().get().isGloballyTerminalState()).isFalse();
    } catch (AssertionError stalled) {
      assertThatThrownBy(() -> second.getJobExecutionResult().get(60, TimeUnit.SECONDS))
          .hasStackTraceContaining("again with other bytes than the public release");
    }

    for (String topic : a.topics().publicTopics()) {
      Map<Long, byte[]> payloads = new HashMap<>();
      for (ConsumerRecord<byte[], byte[]> r : readUncommitted(topic)) {
        long round =
            topic.equals(a.topics().models())
                ? AvroCodec.decodeModel(r.value()).getRound()
                : AvroCodec.decodeAnnouncement(r.value()).getRound();
        String job = new String(r.key());
        byte[] earlier = payloads.putIfAbsent(job.hashCode() * 31L + round, r.value());
        if (earlier != null) {
          assertThat(r.value()).as("%s round %d of %s", topic, round, job).isEqualTo(earlier);
        }
      }
      assertThat(payloads).isNotEmpty();
    }
  }

  private long awaitLatestRound(JobSpec spec) {
    return modelsUntil(spec, l -> !l.isEmpty(), Duration.ofSeconds(30)).stream()
        .mapToLong(GlobalModel::getRound)
        .max()
        .orElseThrow();
  }
}
