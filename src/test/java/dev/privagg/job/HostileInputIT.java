package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.client.ClientUpdates;
import dev.privagg.io.CraftedUpdates;
import dev.privagg.spec.JobSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.junit.jupiter.api.Test;

/**
 * The crafted records that once killed the task (each declares gigabytes in a few bytes, or is a
 * plain record with a megabyte client id), sent through real Kafka to the running job: each is
 * rejected with its reason, the Flink job never fails or restarts, and the round's model is exactly
 * the mean of the good updates sent alongside.
 */
class HostileInputIT extends KafkaFlinkTestBase {
  @Test
  void craftedRecords_areRejectedWithReasons_theJobNeverRestarts_andTheRoundIsExact(
      @InjectClusterClient ClusterClient<?> flink) throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [3]}
            rounds:
              timeout: 6s
              expectedClients: 2
            privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}
            """);
    startJob(spec, 2);
    awaitRound(spec, 1);
    String topic = spec.topics().updates();
    List<CraftedUpdates.Case> cases = new java.util.ArrayList<>(CraftedUpdates.all(spec.jobId()));
    // Exactly at the size limit: its reject carries all of it, and the sink must still send it.
    cases.add(
        new CraftedUpdates.Case(
            "zeros at maxRecordBytes",
            new byte[Math.toIntExact(spec.maxRecordBytes())],
            RejectReason.UNDECODABLE));
    produce(topic, "good-1", ClientUpdates.encode(spec, 1, "good-1", new float[][] {{0.2f, 0, 0}}));
    produce(topic, "x", cases.stream().map(CraftedUpdates.Case::bytes).toArray(byte[][]::new));
    produce(topic, "good-2", ClientUpdates.encode(spec, 1, "good-2", new float[][] {{0, 0.4f, 0}}));

    List<RejectedUpdate> rejects =
        rejectsUntil(spec, l -> l.size() >= cases.size(), Duration.ofSeconds(60));
    Map<ByteBuffer, RejectReason> reasonByBytes = new HashMap<>();
    rejects.forEach(r -> reasonByBytes.put(r.getOriginalBytes(), r.getReason()));
    assertThat(rejects).hasSize(cases.size());
    for (CraftedUpdates.Case crafted : cases) {
      assertThat(reasonByBytes.get(ByteBuffer.wrap(crafted.bytes())))
          .as(crafted.name())
          .isEqualTo(crafted.reason());
    }

    float[] w = weights(awaitModel(spec, 1));
    assertThat((double) w[0]).isCloseTo(0.1, within(1e-6));
    assertThat((double) w[1]).isCloseTo(0.2, within(1e-6));
    assertThat((double) w[2]).isZero();
    awaitRound(spec, 2);
    assertRunningWithoutAnyFailure(flink);
  }

  /** Every job on the cluster runs and its exception history is empty: it never restarted. */
  private static void assertRunningWithoutAnyFailure(ClusterClient<?> flink) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    ObjectMapper json = new ObjectMapper();
    List<JobStatusMessage> jobs = List.copyOf(flink.listJobs().get());
    assertThat(jobs).isNotEmpty();
    for (JobStatusMessage job : jobs) {
      assertThat(job.getJobState()).isEqualTo(JobStatus.RUNNING);
      URI uri = URI.create(flink.getWebInterfaceURL() + "/jobs/" + job.getJobId() + "/exceptions");
      JsonNode body =
          json.readTree(
              http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString())
                  .body());
      assertThat(body.path("exceptionHistory").path("entries").size())
          .as("failures of job %s: %s", job.getJobId(), body)
          .isZero();
      assertThat(body.path("exceptionHistory").isMissingNode()).as(body.toString()).isFalse();
    }
  }
}
