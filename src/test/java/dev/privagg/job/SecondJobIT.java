package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Tensors;
import dev.privagg.job.decide.DeploymentNoise;
import dev.privagg.job.ledger.Deployment;
import dev.privagg.privacy.NoisyAverage;
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
 * secure noise its copy of that round would differ and it would stop too (PublishFunctionTest).
 * Keyed noise is the same only within a deployment: the newer job reads A's deployment nonce from
 * the ledger topic (A has committed rounds before it starts), and every ledger entry of A, by
 * either job and committed or not, carries that one nonce.
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
            rounds: {timeout: 5s, startGrace: 1s, expectedClients: 2}
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
            rounds: {timeout: 5s, startGrace: 1s, expectedClients: 2}
            """
                + privacy);
    JobClient first = startJob(a, 1);
    // Round 2's model is public just after round 3 opened: the newer job reads the topics (A's
    // nonce and round 3's window) then, and with 5 s rounds it starts well before round 3's
    // deadline, so it takes round 3 over and computes it as A does. (With 2 s rounds it mostly
    // started after that deadline, skipped round 3 and numbered round 4 with another window.)
    awaitModel(a, 2);
    JobClient second = startJob(List.of(a, b), 1);

    assertThatThrownBy(() -> first.getJobExecutionResult().get(120, TimeUnit.SECONDS))
        .hasStackTraceContaining("job id " + a.jobId() + " is now served by another Flink job");
    // A writes nothing from here on: a ledger entry of A stamped later is the newer job's.
    long firstStopped = System.currentTimeMillis();
    // The newer job goes on when it took A's open round over and computed the same release. If
    // A announced a round after B read the topics, B numbered that round with another window:
    // then B stops too rather than publish a second payload, and the operator submits one job.
    long reached = awaitLatestRound(a) + 2;
    boolean secondWentOn;
    try {
      awaitModel(a, reached);
      assertThat(second.getJobStatus().get().isGloballyTerminalState()).isFalse();
      ledgerUntil(
          a,
          l ->
              l.stream()
                  .anyMatch(
                      e -> e.getJobId().equals(a.jobId()) && e.getTimestampMillis() > firstStopped),
          Duration.ofSeconds(60));
      secondWentOn = true;
    } catch (AssertionError stalled) {
      assertThatThrownBy(() -> second.getJobExecutionResult().get(60, TimeUnit.SECONDS))
          .hasStackTraceContaining("again with other bytes than the public release");
      secondWentOn = false;
    }

    // A's ledger entries by both jobs, aborted copies included, carry A's one nonce: had the newer
    // job drawn its own, its keyed noise would differ from A's.
    List<LedgerEntry> ledgerOfA =
        readUncommitted(a.topics().ledger()).stream()
            .map(r -> AvroCodec.decodeLedgerEntry(r.value()))
            .filter(e -> e.getJobId().equals(a.jobId()))
            .toList();
    System.out.printf(
        "second job %s; A's ledger entries (round outcome, by the newer job?) %s%n",
        secondWentOn ? "went on" : "stopped",
        ledgerOfA.stream()
            .map(
                e ->
                    e.getRound()
                        + " "
                        + e.getOutcome()
                        + " "
                        + (e.getTimestampMillis() > firstStopped))
            .toList());
    assertThat(ledgerOfA)
        .as("A's ledger entries by both jobs")
        .isNotEmpty()
        .extracting(LedgerEntry::getDeployment)
        .allMatch(Deployment::isNonce, "a deployment nonce")
        .containsOnly(ledgerOfA.get(0).getDeployment());
    if (secondWentOn) {
      assertThat(ledgerOfA)
          .as("an entry of A by the newer job (stamped after A stopped)")
          .anyMatch(e -> e.getTimestampMillis() > firstStopped);
    }
    // No client sends, so each model of A, whichever job released it, is the one before plus the
    // round's keyed noise in A's deployment over m: bit for bit, as the combiner computes it.
    String deployment = ledgerOfA.get(0).getDeployment();
    Map<Long, float[]> modelsOfA = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> r : readUncommitted(a.topics().models())) {
      GlobalModel m = AvroCodec.decodeModel(r.value());
      if (m.getJobId().equals(a.jobId())) {
        modelsOfA.putIfAbsent(m.getRound(), Tensors.flatten(m.getTensors()));
      }
    }
    int checked = 0;
    for (long round : modelsOfA.keySet()) {
      float[] before = modelsOfA.get(round - 1);
      if (round == 0 || before == null) {
        continue;
      }
      double[] average =
          NoisyAverage.average(
              new double[a.model().dimension()],
              DeploymentNoise.sumNoise(a, deployment, round),
              a.rounds().expectedClients());
      float[] expected = before.clone();
      a.serverOptimizer()
          .step(expected, average, a.serverOptimizer().initialState(expected.length));
      assertThat(modelsOfA.get(round))
          .as(
              "A's model of round %d: round %d's plus the noise of A's deployment",
              round, round - 1)
          .isEqualTo(expected);
      checked++;
    }
    assertThat(checked).as("models of A checked against A's deployment noise").isPositive();

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
