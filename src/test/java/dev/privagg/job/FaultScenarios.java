package dev.privagg.job;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.client.ClientUpdates;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Tensors;
import dev.privagg.spec.JobSpec;
import dev.privagg.statistics.ClientStatistics;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Training jobs, their inputs and how they are sent, for {@link FaultInjectionIT}. */
final class FaultScenarios {
  static final int CLIENTS = 6;

  /** A BLT job's planned rounds: more than any scenario runs. */
  static final int BLT_ROUNDS = 6;

  /** A bandmf job's groups: a population of 12 declared, 3 expected a round: q = 3 / (12 / 2). */
  static final int BANDS = 2;

  private FaultScenarios() {}

  /** Where a round's updates go on the two-partition updates topic. */
  enum Placement {
    /** The producer's choice. */
    ANY,
    /**
     * Two updates to partition 1 one by one, then, a moment later, four to partition 0 in one burst
     * (one batch, one append time): which m updates come first is then a matter of the log order,
     * not of which partition a reader happens to fetch first (design.md invariant 10).
     */
    SKEWED
  }

  /**
   * A training job in a scenario: its noise, round policy and timing on the cluster; {@code
   * mechanism}: {@code independent}, {@code blt} (correlated noise over {@link #BLT_ROUNDS} planned
   * rounds, every client may send in each of them), {@code bandmf} (amplified banded MF over as
   * many rounds: the clients in {@link #BANDS} keyed groups, each round's group sampled at 1/2) or
   * {@code statistics} (a statistics job, its clients sampled at 1/2, each round's release its
   * noisy sums: see {@link #rows}).
   */
  record TrainingJob(
      String jobId,
      String noise,
      boolean closeEarly,
      Placement placement,
      int timeoutSeconds,
      String mechanism) {
    TrainingJob(
        String jobId, String noise, boolean closeEarly, Placement placement, int timeoutSeconds) {
      this(jobId, noise, closeEarly, placement, timeoutSeconds, "independent");
    }

    boolean keyed() {
      return noise.equals("keyed");
    }

    /** Round 1 waits for the job's first checkpoint; half a round is ample for it. */
    int startGraceSeconds() {
      return Math.min(timeoutSeconds / 2, 10);
    }

    /** The job's spec: topics named after {@code topicPrefix}, noise keyed by {@code key}. */
    String yaml(String topicPrefix, int roundSeconds, int graceSeconds, Path key) {
      String source =
          keyed() ? "{source: keyed, keyFile: %s}".formatted(key) : "{source: " + noise + "}";
      // Early close is charged as replace-one without amplification, so it samples nothing; BLT
      // bounds participation instead of sampling: minimum separation 1 and as many contributions
      // as planned rounds let the fixed clients send in every round.
      String privacy =
          switch (mechanism) {
            case "blt" ->
                ("  accountant: rdp\n  mechanism: blt\n  blt: {minSeparation: 1,"
                        + " maxParticipations: %d, theta: [0.9, 0.4], omega: [0.2, 0.15]}\n"
                        + "  plannedRounds: %d\n")
                    .formatted(BLT_ROUNDS, BLT_ROUNDS);
            case "bandmf" ->
                ("  accountant: rdp\n  mechanism: bandmf\n  bandmf: {population: 12, bands: %d}\n"
                        + "  plannedRounds: %d\n")
                    .formatted(BANDS, BLT_ROUNDS);
            default -> closeEarly ? "" : "  sampling: {mode: server-poisson, rate: 0.5}\n";
          };
      boolean statistics = mechanism.equals("statistics");
      // A statistics job states no clip norm: each block is clipped to its share of norm 1.
      String query =
          statistics
              ? """
                statistics:
                  maxRows: 3
                  features:
                    - {name: age, bounds: [20, 80], statistics: [mean, variance]}
                    - {name: score, bounds: [0, 10], statistics: [histogram], bins: 4}
                """
              : "model:\n  tensors:\n    - {name: w, shape: [16]}\n";
      return """
          jobId: %s
          %srounds:
            timeout: %ds
            startGrace: %ds
            expectedClients: 3
            closeEarly: %s
          privacy:
          %s  noiseMultiplier: 1.0
            delta: 1.0e-5
            budgetEpsilon: 1000
          %s  noise: %s
          topics: {updates: %s.updates, models: %s.models, rounds: %s.rounds, ledger: %s.ledger, rejects: %s.rejects}
          """
          .formatted(
              jobId,
              query,
              roundSeconds,
              graceSeconds,
              closeEarly,
              statistics ? "" : "  clipNorm: 1.0\n",
              privacy,
              source,
              topicPrefix,
              topicPrefix,
              topicPrefix,
              topicPrefix,
              topicPrefix);
    }
  }

  /** The same updates in every run: client c's update in round r is a fixed function of (r, c). */
  static byte[][] inputs(JobSpec spec, long round) {
    byte[][] out = new byte[CLIENTS][];
    for (int c = 0; c < CLIENTS; c++) {
      out[c] = ClientUpdates.encode(spec, round, clientId(c), update(spec, round, c));
    }
    return out;
  }

  /** Client c's tensors in round r: its rows encoded for a statistics job, else {@link #values}. */
  static float[][] update(JobSpec spec, long round, int client) {
    return spec.statisticsJob()
        ? ClientStatistics.encode(spec.statistics(), rows(round, client))
        : new float[][] {values(round, client)};
  }

  /**
   * Client c's rows (age, score) in round r: 1 to 5 of them, of which the client keeps maxRows = 3,
   * with ages from 5 to 95 and scores from -3 to 13, so that some are clipped to the bounds.
   */
  static double[][] rows(long round, int client) {
    double[][] rows = new double[1 + (int) ((round + client) % 5)][];
    for (int r = 0; r < rows.length; r++) {
      double t = round * 31 + client * 7 + r;
      rows[r] = new double[] {50 + 45 * Math.sin(t), 5 + 8 * Math.cos(t)};
    }
    return rows;
  }

  static String clientId(int client) {
    return "client-" + client;
  }

  /** Client c's tensor w in round r: odd clients' are clipped (norm about 5.7 at C = 1). */
  static float[] values(long round, int client) {
    float[] w = new float[16];
    for (int i = 0; i < w.length; i++) {
      w[i] = (float) Math.sin(round * 31 + client * 7 + i) * (client % 2 == 0 ? 0.1f : 2f);
    }
    return w;
  }

  static void send(
      KafkaProducer<byte[], byte[]> producer, JobSpec spec, long round, Placement placement) {
    byte[][] updates = inputs(spec, round);
    String topic = spec.topics().updates();
    if (placement == Placement.ANY) {
      for (byte[] u : updates) {
        producer.send(new ProducerRecord<>(topic, u));
      }
      producer.flush();
      return;
    }
    for (int c = 0; c < 2; c++) {
      producer.send(new ProducerRecord<>(topic, 1, null, updates[c]));
      producer.flush();
    }
    try {
      // Spacing, not waiting for a condition: the burst must get a later append time than the
      // first two in both runs, so the log order is the same in the reference and here.
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    for (int c = 2; c < CLIENTS; c++) {
      producer.send(new ProducerRecord<>(topic, 0, null, updates[c]));
    }
    producer.flush();
  }

  static KafkaProducer<byte[], byte[]> producer(String bootstrapServers) {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /**
   * A model's values, tensors concatenated: float equality here is bit equality of the released
   * float32 bytes (no release is NaN).
   */
  static float[] tensors(GlobalModel model) {
    return Tensors.flatten(model.getTensors());
  }

  static String describeModel(byte[] bytes) {
    GlobalModel m = AvroCodec.decodeModel(bytes);
    float[] w = Tensors.flatten(m.getTensors());
    return "epsilon %s, w[0..2] %s"
        .formatted(m.getPrivacy().getEpsilon(), Arrays.toString(Arrays.copyOf(w, 3)));
  }

  static String describeAnnouncement(byte[] bytes) {
    RoundAnnouncement a = AvroCodec.decodeAnnouncement(bytes);
    return "base model round %d, deadline %d"
        .formatted(a.getBaseModelRound(), a.getDeadlineMillis());
  }
}
