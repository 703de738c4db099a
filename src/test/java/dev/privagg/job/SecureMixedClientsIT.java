package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.AvroCodec;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Java and Python clients in one secure round (docs/secure-aggregation.md): the Python package
 * installed as its README says, several clients in threads of one Python process ({@code
 * src/test/resources/python/secure_mixed_clients.py}), and Java clients ({@link PrivaggClient})
 * beside them, on a real broker against the job on a MiniCluster. Each side has clients that drop
 * out after phase 2 (shares sent, no masked input) and after phase 4 or 5 (masked input, no unmask
 * shares), so each side's masks are removed from shares the other side holds. Without noise, the
 * released model is exactly the average of the masked-input senders' on-grid updates.
 */
class SecureMixedClientsIT extends KafkaFlinkTestBase {
  private static final Path WORK = Path.of("target", "secure-mixed-it").toAbsolutePath();
  private static final String SCRIPT = "src/test/resources/python/secure_mixed_clients.py";
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Round 1: its start grace goes to the advertise phase (phases count back from the deadline), so
   * the clients can advertise once the job's first checkpoint makes the Opened record visible.
   */
  private static final long ROUND = 1;

  private static final int PYTHON_TIMEOUT_SECONDS = 60;

  /** A client of the round: its id, its side, how many phases it takes part in, and its call. */
  private record Client(String id, boolean python, int phases, String call) {
    boolean sendsMaskedInput() {
      return phases >= 4;
    }
  }

  /**
   * Twelve on the roster (if all advertise in time), eleven who share, nine receipts (U2), eight
   * masked inputs (U3), six who unmask. One full Python client goes through {@code send_update},
   * the plain call.
   */
  private static final List<Client> CLIENTS =
      List.of(
          new Client("java-0", false, 6, "send"),
          new Client("java-1", false, 6, "send"),
          new Client("java-2", false, 6, "send"),
          new Client("java-drops-after-2", false, 2, "sendSecure"),
          new Client("java-drops-after-4", false, 4, "sendSecure"),
          new Client("py-0", true, 6, "send_update"),
          new Client("py-1", true, 6, "send_secure_update"),
          new Client("py-2", true, 6, "send_secure_update"),
          new Client("py-drops-after-3", true, 3, "send_secure_update"),
          new Client("py-drops-after-2", true, 2, "send_secure_update"),
          new Client("py-drops-after-5", true, 5, "send_secure_update"),
          new Client("py-drops-after-1", true, 1, "send_secure_update"));

  private static final int SURVIVORS =
      (int) CLIENTS.stream().filter(Client::sendsMaskedInput).count();

  /**
   * m = the 8 masked-input senders, so the release is their average (a power of two: exact). For 12
   * clients at these rates the job's thresholds give neighbourhoods of 11 and threshold 2: every
   * neighbourhood misses only 1 of the 12, so it holds at least 5 of the 6 clients that unmask,
   * whatever the ring.
   */
  private static String specYaml(String id, boolean distributed) {
    String yaml =
        """
        jobId: %s
        model:
          tensors:
            - {name: w, shape: [8, 4]}
            - {name: b, shape: [4]}
        rounds:
          timeout: 23s
          startGrace: 8s
          expectedClients: %d
          minimumCohort: {count: 6, noiseStd: 0.1}
        privacy:
          clipNorm: 1.0
          noiseMultiplier: 0
          delta: 1.0e-5
          budgetEpsilon: .inf
        serverLearningRate: 1.0
        aggregation:
          mode: secure
          maxDropoutRate: 0.45
          adversarialClientRate: 0.1
          # The lower thresholds, so that five of eleven may drop: this test is of interop
          adversary: curious-server
          phases: {advertise: 4s, share: 4s, confirm: 4s, maskedInput: 4s, consistency: 3s}
        topics:
          updates: %s.updates
          models: %s.models
          rounds: %s.rounds
          ledger: %s.ledger
          rejects: %s.rejects
          secure: %s.secure
        """
            .formatted(id, SURVIVORS, id, id, id, id, id, id);
    if (!distributed) {
      return yaml;
    }
    // Both clients add their discrete Gaussian shares and mask 18-bit words; the least noise the
    // accounting covers well keeps the check sharp.
    return yaml.replace(
            "  clipNorm: 1.0\n  noiseMultiplier: 0\n",
            "  mechanism: distributed-discrete-gaussian\n  clipNorm: 1.0\n  noiseMultiplier: 0.001\n")
        .replace("  expectedClients:", "  maxClients: 20\n  expectedClients:")
        .replace("  mode: secure\n", "  mode: secure\n  bitsPerCoordinate: 18\n");
  }

  @Test
  void javaAndPythonClients_inOneSecureRound_withDropoutsOnBothSides_releaseTheSurvivorsAverage()
      throws Exception {
    runMixedRound(false);
  }

  /**
   * The same round with distributed noise: Java's and Python's clients rotate, round, add their
   * discrete Gaussian shares and pack 18-bit words alike, or the unmasked sum would not decode to
   * the survivors' clipped average within the shares' noise.
   */
  @Test
  void javaAndPythonClients_withDistributedNoise_releaseTheSurvivorsClippedAveragePlusTheirShares()
      throws Exception {
    runMixedRound(true);
  }

  private void runMixedRound(boolean distributed) throws Exception {
    Path python = PythonEnvironment.python(); // before the job: the venv takes a while
    String id = "mixed-" + UUID.randomUUID().toString().substring(0, 8);
    Files.createDirectories(WORK);
    Path specFile = WORK.resolve(id + ".yaml");
    Files.writeString(specFile, specYaml(id, distributed));
    JobSpec spec = JobSpecReader.parse(specFile.toString(), Files.readString(specFile));
    Map<String, float[][]> updates =
        distributed
            ? updates(spec, new Random(19), r -> (float) (r.nextGaussian() * 0.3)) // clipped to 1
            : updates(spec, new Random(17), r -> (r.nextInt(2049) - 1024) / (float) (1 << 20));
    Path config = WORK.resolve(id + "-clients.json");
    Files.writeString(config, pythonConfig(specFile, updates));

    startJob(spec, 2);
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS.size());
    try {
      // The Python process waits for the round's Opened record itself; started now, its start-up
      // is over long before the round opens.
      Future<String> pythonRun =
          pool.submit(
              () ->
                  PythonEnvironment.run(
                      List.of(python.toString(), SCRIPT, config.toString()),
                      Map.of(),
                      WORK.resolve(id + "-python.log"),
                      4L * PYTHON_TIMEOUT_SECONDS));
      float[] base = weights(awaitModel(spec, ROUND - 1));
      awaitRound(spec, ROUND);
      runJavaClients(spec, pool, updates);
      String pythonOutput = pythonRun.get();
      float[] model = weights(awaitModel(spec, ROUND));

      assertThat(pythonOutput).contains("privagg_client from " + PythonEnvironment.VENV);
      Map<String, JsonNode> results = pythonResults(pythonOutput);
      assertThat(results.keySet())
          .as("Python clients that reported")
          .containsExactlyInAnyOrderElementsOf(
              CLIENTS.stream().filter(Client::python).map(Client::id).toList());
      for (Client c : CLIENTS.stream().filter(Client::python).toList()) {
        JsonNode r = results.get(c.id());
        assertThat(r.get("ok").asBoolean()).as("%s succeeded: %s", c.id(), r).isTrue();
        if (c.call().equals("send_secure_update")) {
          assertThat(r.get("rejected_shares").size())
              .as("%s: routed shares it could not open (Java's and Python's alike)", c.id())
              .isZero();
          if (c.phases() == 6) {
            assertThat(r.get("survivors").asInt())
                .as("%s: masked inputs the job counted, Java's and Python's", c.id())
                .isEqualTo(SURVIVORS);
          }
        }
      }

      assertThat(rejects(spec)).as("rejected secure messages").isEmpty();
      if (distributed) {
        checkDistributed(spec, base, model, updates);
        return;
      }
      float[] expected = average(base, updates, Client::sendsMaskedInput);
      assertThat(model).as("released model vs the survivors' average").isEqualTo(expected);
      assertThat(model)
          .as("the phase-2 dropouts' updates are not in it")
          .isNotEqualTo(average(base, updates, c -> c.phases() >= 2));
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Every client's update, each value drawn by {@code value}: on the fixed-point grid (k 2^-20 with
   * C = 1, so 2^16 k units, |k| <= 1024), far inside the clip norm, so that quantization is exact
   * on both sides and so is their average over 8; or of norm about 1.8, which every client clips to
   * C = 1 itself.
   */
  private static Map<String, float[][]> updates(
      JobSpec spec, Random random, java.util.function.ToDoubleFunction<Random> value) {
    Map<String, float[][]> out = new LinkedHashMap<>();
    for (Client c : CLIENTS) {
      List<JobSpec.TensorSpec> tensors = spec.model().tensors();
      float[][] update = new float[tensors.size()][];
      for (int t = 0; t < update.length; t++) {
        update[t] = new float[tensors.get(t).size()];
        for (int i = 0; i < update[t].length; i++) {
          update[t][i] = (float) value.applyAsDouble(random);
        }
      }
      out.put(c.id(), update);
    }
    return out;
  }

  /**
   * The model against base plus the survivors' clipped average: within 6 stds of the 8 shares'
   * noise (fails by chance with probability about 36 * 2e-9) plus 8 roundings of at most sqrt(p)
   * grid units each, over m.
   */
  private static void checkDistributed(
      JobSpec spec, float[] base, float[] model, Map<String, float[][]> updates) {
    var plan = spec.distributedNoise();
    double[] expected = new double[base.length];
    for (Client c : CLIENTS) {
      if (!c.sendsMaskedInput()) {
        continue;
      }
      double norm = 0;
      for (float[] t : updates.get(c.id())) {
        for (float v : t) {
          norm += v * v;
        }
      }
      double scale = Math.min(1, 1 / Math.sqrt(norm));
      int i = 0;
      for (float[] t : updates.get(c.id())) {
        for (float v : t) {
          expected[i++] += v * scale / SURVIVORS;
        }
      }
    }
    double sigma =
        Math.sqrt(
            plan.maxInputs() * (double) plan.varianceNumerator() / plan.varianceDenominator());
    double tolerance =
        (6 * sigma + SURVIVORS * Math.sqrt(plan.paddedDimension()))
            / plan.unitsPerClipNorm()
            / SURVIVORS;
    assertThat(tolerance).as("the check is sharp next to the updates").isLessThan(0.01);
    for (int j = 0; j < base.length; j++) {
      assertThat((double) model[j])
          .as("coordinate %d", j)
          .isCloseTo(base[j] + expected[j], org.assertj.core.data.Offset.offset(tolerance));
    }
  }

  /** What secure_mixed_clients.py reads: the Python clients, each update as nested lists. */
  private String pythonConfig(Path specFile, Map<String, float[][]> updates) throws Exception {
    ObjectNode root = JSON.createObjectNode();
    root.put("bootstrap", bootstrap);
    root.put("spec", specFile.toString());
    root.put("round", ROUND);
    root.put("timeout", PYTHON_TIMEOUT_SECONDS);
    ArrayNode clients = root.putArray("clients");
    JobSpec spec = JobSpecReader.parse(specFile.toString(), Files.readString(specFile));
    for (Client c : CLIENTS.stream().filter(Client::python).toList()) {
      ObjectNode client = clients.addObject();
      client.put("id", c.id());
      client.put("phases", c.phases());
      client.put("call", c.call());
      ObjectNode update = client.putObject("update");
      float[][] values = updates.get(c.id());
      List<JobSpec.TensorSpec> tensors = spec.model().tensors();
      for (int t = 0; t < tensors.size(); t++) {
        JobSpec.TensorSpec tensor = tensors.get(t);
        ArrayNode rows = update.putArray(tensor.name());
        int[] shape = tensor.shape();
        int columns = shape.length == 1 ? values[t].length : shape[1];
        for (int i = 0; i < values[t].length; i += columns) {
          ArrayNode row = shape.length == 1 ? rows : rows.addArray();
          for (int j = i; j < i + columns; j++) {
            row.add((double) values[t][j]); // exact: k 2^-20
          }
        }
      }
    }
    return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root);
  }

  private static void runJavaClients(
      JobSpec spec, ExecutorService pool, Map<String, float[][]> updates) throws Exception {
    try (PrivaggClient client = new PrivaggClient(spec, bootstrap)) {
      List<Future<?>> done = new ArrayList<>();
      for (Client c : CLIENTS.stream().filter(c -> !c.python()).toList()) {
        done.add(
            pool.submit(
                () -> {
                  if (c.call().equals("send")) {
                    client.send(ROUND, c.id(), updates.get(c.id()));
                  } else {
                    client.sendSecure(ROUND, c.id(), updates.get(c.id()), c.phases());
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    }
  }

  /** {@code base} plus the average over m = SURVIVORS of the updates of {@code counted}. */
  private static float[] average(
      float[] base, Map<String, float[][]> updates, Predicate<Client> counted) {
    double[] sum = new double[base.length];
    for (Client c : CLIENTS) {
      if (!counted.test(c)) {
        continue;
      }
      int i = 0;
      for (float[] tensor : updates.get(c.id())) {
        for (float v : tensor) {
          sum[i++] += v;
        }
      }
    }
    float[] out = new float[base.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = (float) (base[i] + sum[i] / SURVIVORS);
    }
    return out;
  }

  private static Map<String, JsonNode> pythonResults(String output) throws Exception {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    for (String line : output.split("\n")) {
      if (line.startsWith("RESULT ")) {
        JsonNode r = JSON.readTree(line.substring("RESULT ".length()));
        out.put(r.get("id").asText(), r);
      }
    }
    return out;
  }

  private List<RejectedUpdate> rejects(JobSpec spec) {
    List<RejectedUpdate> out = new ArrayList<>();
    readUncommitted(spec.topics().rejects())
        .forEach(r -> out.add(AvroCodec.decodeReject(r.value())));
    return out;
  }
}
