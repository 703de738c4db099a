package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.client.ClientUpdates;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.ledger.Deployment;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The same inputs at parallelism 1, 2 and 4 (4 above the updates topic's 2 partitions: the source
 * runs one reader per partition, the rest at 4, and rounds still close on the heartbeat-driven
 * watermark). Clipping and summing run in one shard per subtask; every release (the whole model
 * record) is byte-identical: parallelism and shard count change neither membership, nor the exact
 * fixed-point sum, nor the noise.
 *
 * <p>Each run starts on recreated topics, which is a new deployment: keyed noise would differ
 * between the runs by design (a fresh deployment nonce each time, which the ledgers show), so the
 * runs use seeded noise, which depends only on the public seed, the models topic, the job and the
 * round.
 */
class ParallelismIT extends KafkaFlinkTestBase {
  private static final int PARTITIONS = 2; // what ensureTopics gives the updates topic in tests
  private static final int ROUNDS = 3;
  private static final int CLIENTS = 8;
  private static final long NOISE_SEED = 20261125;

  @Test
  void releases_areBitIdentical_atParallelism1_2And4_evenAbovePartitions() throws Exception {
    String jobId = "par-" + UUID.randomUUID().toString().substring(0, 8);
    JobSpec spec = JobSpecReader.parse("parallel", yaml(jobId, jobId));

    Map<Long, byte[]> expected = null;
    List<String> deployments = new ArrayList<>();
    for (int parallelism : new int[] {1, 2, 4}) {
      // The same job id, seed and topic names each time, from nothing: seeded noise derives from
      // the seed, models topic, job and round, so each run must release the same bytes.
      stopJobs();
      recreateTopics(spec);
      assertThat(parallelismsOf(spec, parallelism))
          .containsEntry("updates-source", Math.min(parallelism, PARTITIONS))
          .containsEntry("decode-validate", parallelism)
          .containsEntry("shard-sums", parallelism)
          .containsEntry("round-aggregator", parallelism)
          .containsEntry("round-combiner", parallelism);
      Map<Long, byte[]> actual = runRounds(spec, parallelism, deployments);
      if (expected == null) {
        expected = actual;
        continue;
      }
      for (long r = 1; r <= ROUNDS; r++) {
        assertThat(actual.get(r))
            .as("model record of round %d at parallelism %d", r, parallelism)
            .isEqualTo(expected.get(r));
      }
    }
    // Recreated topics record no deployment: each run drew its own nonce (keyed noise would have
    // differed), and seeded noise ignored it.
    assertThat(deployments)
        .as("deployment nonces of the three runs")
        .allMatch(Deployment::isNonce)
        .doesNotHaveDuplicates();
  }

  /**
   * Runs the job at {@code parallelism} through {@link #ROUNDS} rounds of the same inputs and
   * returns each round's model record as published, after checking that every update was summed and
   * that the run's ledger entries carry one deployment nonce, which it adds to {@code deployments}.
   */
  private Map<Long, byte[]> runRounds(JobSpec spec, int parallelism, List<String> deployments)
      throws Exception {
    startJob(spec, parallelism);
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      for (long r = 1; r <= ROUNDS; r++) {
        awaitRound(spec, r);
        // Half the clients on each partition, so both readers carry updates, not only ticks.
        byte[][] updates = inputs(spec, r);
        for (int c = 0; c < CLIENTS; c++) {
          producer.send(
              new ProducerRecord<>(spec.topics().updates(), c % PARTITIONS, null, updates[c]));
        }
        producer.flush();
        awaitModel(spec, r);
      }
    }
    List<LedgerEntry> ledger =
        ledgerUntil(spec, l -> l.size() >= ROUNDS, Duration.ofSeconds(30)).subList(0, ROUNDS);
    assertThat(ledger).extracting(LedgerEntry::getRound).containsExactly(1L, 2L, 3L);
    assertThat(ledger)
        .as("parallelism %d: every update is in its round", parallelism)
        .extracting(LedgerEntry::getContributions)
        .containsOnly((long) CLIENTS);
    assertThat(ledger)
        .as("parallelism %d: one deployment nonce in the run's ledger entries", parallelism)
        .extracting(LedgerEntry::getDeployment)
        .containsOnly(ledger.get(0).getDeployment());
    deployments.add(ledger.get(0).getDeployment());

    // Re-encoding a decoded record gives its published bytes (Avro's binary encoding is canonical).
    Map<Long, byte[]> models = new HashMap<>();
    for (GlobalModel model :
        modelsUntil(
            spec, l -> l.stream().anyMatch(m -> m.getRound() == ROUNDS), Duration.ofSeconds(30))) {
      assertThat(models.put(model.getRound(), AvroCodec.encode(model)))
          .as("round %d published twice", model.getRound())
          .isNull();
    }
    return models;
  }

  /** Operator uid to parallelism in the job graph that {@link PrivaggJob#define} builds. */
  private static Map<String, Integer> parallelismsOf(JobSpec spec, int parallelism) {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    PrivaggJob.define(
        env,
        List.of(spec),
        new PrivaggJob.Settings(kafka.connection(), 300, parallelism, System.currentTimeMillis()));
    Map<String, Integer> out = new HashMap<>();
    for (StreamNode node : env.getStreamGraph().getStreamNodes()) {
      out.put(node.getTransformationUID(), node.getParallelism());
    }
    return out;
  }

  /** Client c's update in round r is a fixed function of (r, c); a third of them are clipped. */
  private static byte[][] inputs(JobSpec spec, long round) {
    byte[][] out = new byte[CLIENTS][];
    for (int c = 0; c < CLIENTS; c++) {
      float[] w = new float[12];
      float[] b = new float[3];
      for (int i = 0; i < w.length; i++) {
        w[i] = (float) Math.sin(round * 31 + c * 7 + i) * (c % 3 == 0 ? 2f : 0.1f);
      }
      for (int i = 0; i < b.length; i++) {
        b[i] = (float) Math.cos(round * 17 + c * 5 + i) * 0.1f;
      }
      out[c] = ClientUpdates.encode(spec, round, "client-" + c, new float[][] {w, b});
    }
    return out;
  }

  /**
   * Same job id and seed in every run (seeded noise derives from the seed, models topic, job and
   * round), own topics. Round 1 gets a start grace so its announcement is read well before the
   * deadline on a busy machine.
   */
  private static String yaml(String jobId, String topicPrefix) {
    return """
        jobId: %s
        model:
          tensors:
            - {name: w, shape: [4, 3]}
            - {name: b, shape: [3]}
        rounds:
          timeout: 4s
          startGrace: 4s
          expectedClients: %d
        privacy:
          clipNorm: 1.0
          noiseMultiplier: 1.0
          delta: 1.0e-5
          budgetEpsilon: 1000
          noise: {source: seeded, seed: %d}
        topics: {updates: %s.updates, models: %s.models, rounds: %s.rounds, ledger: %s.ledger, rejects: %s.rejects}
        """
        .formatted(
            jobId,
            CLIENTS,
            NOISE_SEED,
            topicPrefix,
            topicPrefix,
            topicPrefix,
            topicPrefix,
            topicPrefix);
  }

  private static KafkaProducer<byte[], byte[]> producer() {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }
}
