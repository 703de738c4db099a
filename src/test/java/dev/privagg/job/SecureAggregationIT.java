package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.MaskedInput;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.SecureMessage;
import dev.privagg.client.ClientUpdates;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.SecureMessageReader;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.flink.core.execution.JobClient;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;

/**
 * Secure aggregation end to end (docs/secure-aggregation.md): Java clients on a real broker run the
 * six phases against the job on a MiniCluster, with clients dropping out after each phase, and the
 * released model is bit for bit the one plaintext mode releases from the survivors' updates under
 * the same seeded noise.
 */
class SecureAggregationIT extends KafkaFlinkTestBase {
  private static final int CLIENTS = 14;
  private static final int DIMENSION = 36;

  private static final String BODY =
      """
      model:
        tensors:
          - {name: w, shape: [8, 4]}
          - {name: b, shape: [4]}
      rounds:
        timeout: %s
        startGrace: 4s
        expectedClients: 10
        minimumCohort: {count: 5, noiseStd: 0.1}
      privacy:
        clipNorm: 1.0
        noiseMultiplier: 1.0
        delta: 1.0e-5
        budgetEpsilon: 1000
        noise: {source: seeded, seed: 11}
      serverLearningRate: 1.0
      %s
      """;

  private static final String SECURE =
      """
      aggregation:
        mode: secure
        # 5 of the 14 stop early: more than the 2 declared, but the ring of 14 at these rates
        # (k = 13, t = 8) leaves every secret t holders wherever the 5 are
        maxDropoutRate: 0.15
        adversarialClientRate: 0.1
        phases: {advertise: 3s, share: 3s, confirm: 3s, maskedInput: 3s, consistency: 3s}
      """;

  @Test
  void secureRound_withDropoutsAtEachPhase_releasesThePlaintextModelOfItsSurvivors()
      throws Exception {
    JobSpec secure = spec(BODY.formatted("18s", SECURE));
    float[][][] updates = onGridUpdates(new Random(5));
    // Client 0 stops after phase 1, 1 after phase 2 (shares), 2 after phase 3 (its receipt), 3
    // after phase 4 (its masked input), 4 after phase 5 (its survivor signature); the rest finish.
    int[] phases = new int[CLIENTS];
    java.util.Arrays.fill(phases, 6);
    phases[0] = 1;
    phases[1] = 2;
    phases[2] = 3;
    phases[3] = 4;
    phases[4] = 5;

    JobClient job = startJob(secure, 2);
    awaitModel(secure, 0);
    awaitRound(secure, 1);
    runSecureRound(secure, 1, updates, phases);
    float[] secureModel = weights(awaitModel(secure, 1));
    job.cancel().get();

    List<RejectedUpdate> rejects = rejects(secure);
    assertThat(rejects).as("rejected secure messages").isEmpty();
    assertMaskedInputsLookUniform(secure);

    // Plaintext mode on the same topics and job id (so the same seeded noise stream), after the
    // secure run's topics are gone: only clients that sent a masked input (3 to 13) count.
    deleteTopics(secure);
    forgetReads();
    JobSpec plaintext = siblingSpec(secure, secure.jobId(), BODY.formatted("3s", ""));
    startJob(plaintext, 2);
    awaitModel(plaintext, 0);
    awaitRound(plaintext, 1);
    List<byte[]> plain = new ArrayList<>();
    for (int c = 3; c < CLIENTS; c++) {
      plain.add(ClientUpdates.encode(plaintext, 1, "client-" + c, updates[c]));
    }
    produce(plaintext.topics().updates(), null, plain.toArray(new byte[0][]));
    float[] plaintextModel = weights(awaitModel(plaintext, 1));

    assertThat(secureModel)
        .as("secure model vs plaintext model, bit for bit")
        .isEqualTo(plaintextModel);
    assertThat(nonZero(secureModel)).as("the round moved the model").isTrue();
  }

  /**
   * A statistics job in secure mode: 14 clients send rows through the six phases with {@link
   * PrivaggClient#sendStatistics} (clipped flat at 1 by the clients), and the release's count and
   * mean land within 6 of their stated noise stds of the truth (false-failure rate 2e-9 each): the
   * job learns only the sum, and the statistics come out as in plaintext mode.
   */
  @Test
  void secureStatistics_releaseTheSurvivorsStatistics_withinTheirNoise() throws Exception {
    JobSpec spec =
        spec(
            """
            statistics:
              maxRows: 2
              features:
                - {name: x, bounds: [0, 10], statistics: [mean]}
            rounds:
              timeout: 30s
              startGrace: 4s
              expectedClients: 10
              minimumCohort: {count: 5, noiseStd: 0.1}
            privacy:
              noiseMultiplier: 0.5
              delta: 1.0e-5
              budgetEpsilon: 1000
              noise: {source: seeded, seed: 12}
            aggregation:
              mode: secure
              maxDropoutRate: 0.15
              adversarialClientRate: 0.1
              # a long first phase: the clients start once round 1 is announced, on a busy machine
              phases: {advertise: 10s, share: 4s, confirm: 4s, maskedInput: 4s, consistency: 4s}
            """);
    assertThat(spec.clippingPolicy().mode())
        .isEqualTo(dev.privagg.privacy.ClippingPolicy.Mode.FLAT);
    startJob(spec, 2);
    awaitRound(spec, 1);
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    double sum = 0;
    try (PrivaggClient client = new PrivaggClient(spec, bootstrap)) {
      List<Future<?>> done = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        double[][] rows = {{c % 10}, {(c * 3) % 10}};
        sum += rows[0][0] + rows[1][0];
        int id = c;
        done.add(
            pool.submit(
                () -> {
                  client.sendStatistics(1, "stats-" + id, rows);
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    dev.privagg.avro.StatisticsRelease released = awaitModel(spec, 1).getStatistics();
    assertThat(released.getCount().getValue())
        .isCloseTo(2.0 * CLIENTS, within(6 * released.getCount().getStd()));
    dev.privagg.avro.StatisticEstimate mean = released.getFeatures().get(0).getMean();
    assertThat(mean.getValue()).isCloseTo(sum / (2.0 * CLIENTS), within(6 * mean.getStd()));
    assertThat(rejects(spec)).as("rejected secure messages").isEmpty();
  }

  private static final String DISTRIBUTED =
      """
      model:
        tensors:
          - {name: w, shape: [8, 4]}
          - {name: b, shape: [4]}
      rounds:
        timeout: 18s
        startGrace: 4s
        expectedClients: 10
        maxClients: 20
        minimumCohort: {count: 5, noiseStd: 0.1}
      privacy:
        mechanism: distributed-discrete-gaussian
        clipNorm: 1.0
        # the least noise the accounting covers well: the shares' sigma is a few grid units
        noiseMultiplier: 0.001
        delta: 1.0e-5
        budgetEpsilon: .inf
      serverLearningRate: 1.0
      aggregation:
        mode: secure
        maxDropoutRate: 0.15
        adversarialClientRate: 0.1
        bitsPerCoordinate: 18
        phases: {advertise: 3s, share: 3s, confirm: 3s, maskedInput: 3s, consistency: 3s}
      """;

  /**
   * Distributed noise through a real job, with a client dropping out after each phase: the job
   * unmasks 18-bit words that already hold the survivors' noise shares, inverts rotation and grid,
   * and adds nothing of its own. With the noise at its minimum the model is the survivors' mean of
   * their clipped updates to within the shares' noise and the grid's rounding; the ledger charges
   * the distributed mechanism; each masked input is 64 words of 18 bits.
   */
  @Test
  void distributedNoise_withDropoutsAtEachPhase_releasesTheSurvivorsMeanPlusTheirShares()
      throws Exception {
    JobSpec spec = spec(DISTRIBUTED);
    var plan = spec.distributedNoise();
    assertThat(plan.paddedDimension()).isEqualTo(64);
    Random random = new Random(9);
    float[][][] updates = new float[CLIENTS][][];
    for (int c = 0; c < CLIENTS; c++) {
      float[] w = new float[32];
      float[] b = new float[4];
      for (float[] t : new float[][] {w, b}) {
        for (int i = 0; i < t.length; i++) {
          t[i] = (float) (random.nextGaussian() * 0.3); // norm about 1.8: clipped to 1
        }
      }
      updates[c] = new float[][] {w, b};
    }
    int[] phases = new int[CLIENTS];
    java.util.Arrays.fill(phases, 6);
    for (int c = 0; c < 5; c++) {
      phases[c] = c + 1;
    }
    JobClient job = startJob(spec, 2);
    awaitModel(spec, 0);
    awaitRound(spec, 1);
    runSecureRound(spec, 1, updates, phases);
    float[] model = weights(awaitModel(spec, 1));
    List<LedgerEntry> ledger =
        ledgerUntil(spec, l -> l.stream().anyMatch(e -> e.getRound() == 1), Duration.ofSeconds(60));
    job.cancel().get();

    assertThat(rejects(spec)).as("rejected secure messages").isEmpty();
    double[] expected = new double[DIMENSION];
    for (int c = 3; c < CLIENTS; c++) { // clients 3 to 13 sent a masked input
      double norm = 0;
      for (float[] t : updates[c]) {
        for (float v : t) {
          norm += v * v;
        }
      }
      double scale = Math.min(1, 1 / Math.sqrt(norm));
      int at = 0;
      for (float[] t : updates[c]) {
        for (float v : t) {
          expected[at++] += v * scale / 10; // the mean over m = 10, lr 1
        }
      }
    }
    // maxClients = 20 shares of sigma^2 units^2 each (nine the job's), and eleven roundings of at
    // most sqrt(64) units in norm,
    // in model units over m: 6 noise stds fail by chance with probability about 36 * 2e-9.
    double sigma =
        Math.sqrt(
            plan.maxInputs() * (double) plan.varianceNumerator() / plan.varianceDenominator());
    double tolerance = (6 * sigma + 11 * 8) / plan.unitsPerClipNorm() / 10;
    for (int j = 0; j < DIMENSION; j++) {
      assertThat((double) model[j])
          .as("coordinate %d", j)
          .isCloseTo(expected[j], within(tolerance));
    }
    assertThat(tolerance).as("the check is sharp next to the updates").isLessThan(0.01);
    LedgerEntry charged = ledger.stream().filter(e -> e.getRound() == 1).findFirst().orElseThrow();
    assertThat(charged.getMechanismKind()).isEqualTo("DISTRIBUTED_DISCRETE_GAUSSIAN");
    assertThat(charged.getContributions()).isEqualTo(11);
    long masked = 0;
    for (var record : readUncommitted(spec.topics().updates())) {
      if (SecureMessageReader.isSecureMessage(record.value())
          && AvroCodec.decodeSecureMessage(record.value()).getBody() instanceof MaskedInput input) {
        assertThat(input.getValues().remaining()).isEqualTo(64 * 18 / 8);
        masked++;
      }
    }
    assertThat(masked).isEqualTo(11);
  }

  /**
   * Updates on the fixed-point grid (k 2^-20 with C = 1, so 2^16 k units), well inside the clip
   * norm: the job clips and truncates them to the same integers the secure clients' randomized
   * rounding gives.
   */
  private static float[][][] onGridUpdates(Random random) {
    float[][][] updates = new float[CLIENTS][][];
    for (int c = 0; c < CLIENTS; c++) {
      float[] w = new float[32];
      float[] b = new float[4];
      for (float[] t : new float[][] {w, b}) {
        for (int i = 0; i < t.length; i++) {
          t[i] = (random.nextInt(2049) - 1024) / (float) (1 << 20);
        }
      }
      updates[c] = new float[][] {w, b};
    }
    return updates;
  }

  private void runSecureRound(JobSpec spec, long round, float[][][] updates, int[] phases)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    try (PrivaggClient client = new PrivaggClient(spec, bootstrap)) {
      List<Future<?>> done = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        int id = c;
        done.add(
            pool.submit(
                () -> {
                  client.sendSecure(round, "client-" + id, updates[id], phases[id]);
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * What the job receives of the clients' updates, the masked inputs on the updates topic, is
   * uniform bytes: a chi-square test of their byte counts (255 degrees of freedom) against the 1e-6
   * tails of its distribution (so a false failure once in 500,000 runs). The quantized updates
   * themselves (units of at most 2^26 in magnitude) fail it: most of their bytes are 0x00 or 0xFF.
   */
  private void assertMaskedInputsLookUniform(JobSpec spec) {
    long[] counts = new long[256];
    long bytes = 0;
    for (var record : readUncommitted(spec.topics().updates())) {
      if (!SecureMessageReader.isSecureMessage(record.value())) {
        continue; // a heartbeat tick
      }
      SecureMessage m = AvroCodec.decodeSecureMessage(record.value());
      if (m.getBody() instanceof MaskedInput input) {
        java.nio.ByteBuffer values = input.getValues().duplicate();
        while (values.hasRemaining()) {
          counts[values.get() & 0xFF]++;
          bytes++;
        }
      }
    }
    assertThat(bytes).as("masked input bytes").isEqualTo(11L * 8 * DIMENSION);
    double expected = bytes / 256.0;
    double chiSquare = 0;
    for (long c : counts) {
      chiSquare += (c - expected) * (c - expected) / expected;
    }
    // scipy.stats.chi2.ppf(1e-6, 255) and chi2.ppf(1 - 1e-6, 255)
    assertThat(chiSquare).as("chi-square of the masked bytes").isBetween(161.65, 377.08);
  }

  private List<RejectedUpdate> rejects(JobSpec spec) {
    List<RejectedUpdate> out = new ArrayList<>();
    readUncommitted(spec.topics().rejects())
        .forEach(r -> out.add(AvroCodec.decodeReject(r.value())));
    return out;
  }

  private void deleteTopics(JobSpec spec) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      List<String> topics = new ArrayList<>(spec.topics().all());
      topics.add(spec.topics().secure());
      admin.deleteTopics(topics).all().get();
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (admin.listTopics().names().get().stream().anyMatch(topics::contains)) {
        if (System.nanoTime() > end) {
          throw new AssertionError("topics were not deleted: " + topics);
        }
        Thread.sleep(200);
      }
    }
  }

  private static boolean nonZero(float[] values) {
    for (float v : values) {
      if (v != 0) {
        return true;
      }
    }
    return false;
  }
}
