package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.privagg.client.ClientUpdates;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.GaussianCalibration;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Python client's pytest suite ({@code clients/python/tests}), installed into a venv as the
 * README says, against the real broker and job: unit tests, the byte-for-byte comparison with
 * {@link ClientUpdates#encode}, and integration tests that send updates from several Python clients
 * and check the released model against the spec's average. Also its type check: {@code mypy
 * --strict} as {@code clients/python/pyproject.toml} configures it.
 */
class PythonClientIT extends KafkaFlinkTestBase {
  private static final Path WORK = Path.of("target", "python-it").toAbsolutePath();

  /** The spec test_integration.py expects: m = 3, clipNorm 1, noise multiplier 0.01. */
  private static String specYaml(String id) {
    return """
        jobId: %s
        model:
          tensors:
            - {name: weight, shape: [4, 3]}
            - {name: bias, shape: [4]}
        rounds:
          timeout: 3s
          expectedClients: 3
        privacy:
          clipNorm: 1.0
          noiseMultiplier: 0.01
          delta: 1.0e-5
          budgetEpsilon: .inf
        serverLearningRate: 1.0
        """
            .formatted(id)
        + topicsYaml(id);
  }

  /**
   * The statistics job test_statistics_integration.py expects, on the training job's topics (one
   * Flink job serves both): one feature x in [0, 10], its mean.
   */
  private static String statisticsYaml(String id) {
    return """
        jobId: %s-stats
        statistics:
          maxRows: 3
          features:
            - {name: x, bounds: [0, 10], statistics: [mean]}
        rounds:
          timeout: 3s
          expectedClients: 3
        privacy:
          noiseMultiplier: 0.01
          delta: 1.0e-5
          budgetEpsilon: .inf
        """
            .formatted(id)
        + topicsYaml(id);
  }

  /** Both jobs' topics: one Flink job serves every spec it runs, on the same topics. */
  private static String topicsYaml(String id) {
    return "topics: {updates: %s.updates, models: %s.models, rounds: %s.rounds, ledger: %s.ledger, rejects: %s.rejects}\n"
        .formatted(id, id, id, id, id);
  }

  /** The values test_wire.py encodes too: ((i * 7) % 23 - 11) / 16, exact in float32. */
  private static float[][] crossCheckValues(JobSpec spec) {
    List<JobSpec.TensorSpec> tensors = spec.model().tensors();
    float[][] out = new float[tensors.size()][];
    int i = 0;
    for (int t = 0; t < out.length; t++) {
      out[t] = new float[tensors.get(t).size()];
      for (int j = 0; j < out[t].length; j++, i++) {
        out[t][j] = ((i * 7) % 23 - 11) / 16f;
      }
    }
    return out;
  }

  /**
   * The Java privacy core's values for test_dp_sgd.py, which the Python accountant and calibration
   * must reproduce: RDP epsilon of sampled Gaussians over a grid from DP-SGD's small sampling rates
   * to federated rounds, and the analytic Gaussian's noise multiplier.
   */
  private static String javaEpsilons() {
    StringBuilder rdp = new StringBuilder();
    double[][] grid = {
      {1.1, 256.0 / 60000, 14063, 1e-5},
      {1.5, 0.04, 2250, 1e-5},
      {0.8, 0.01, 1000, 1e-6},
      {1.0, 0.1, 50, 1e-5},
      {2.0, 0.5, 10, 1e-5},
      {0.6, 0.001, 100000, 1e-5},
      {5.0, 1.0, 100, 1e-5},
      {1.0, 1.0, 1, 1e-5},
      {0.5, 0.02, 300, 1e-3},
      {3.0, 0.3, 40, 1e-8},
    };
    for (double[] g : grid) {
      double epsilon =
          Accountant.named("rdp")
              .epsilon(
                  PrivacyLedger.of(PrivacyEvent.sampledGaussian(g[0], g[1], (long) g[2])), g[3])
              .epsilon();
      rdp.append(rdp.isEmpty() ? "" : ",")
          .append(
              "{\"z\": %s, \"q\": %s, \"steps\": %d, \"delta\": %s, \"epsilon\": %s}"
                  .formatted(g[0], g[1], (long) g[2], g[3], epsilon));
    }
    StringBuilder sigma = new StringBuilder();
    for (double[] g : new double[][] {{1, 1e-5}, {0.1, 1e-5}, {4, 1e-6}, {10, 1e-3}, {0.5, 0.01}}) {
      sigma
          .append(sigma.isEmpty() ? "" : ",")
          .append(
              "{\"epsilon\": %s, \"delta\": %s, \"sigma\": %s}"
                  .formatted(g[0], g[1], GaussianCalibration.analyticSigma(g[0], g[1], 1)));
    }
    return "{\"rdp\": [" + rdp + "], \"analyticSigma\": [" + sigma + "]}\n";
  }

  @Test
  void pytestSuite_passesAgainstTheRunningJob_withNothingSkipped() throws Exception {
    Path python = PythonEnvironment.python();
    String id = "py-" + UUID.randomUUID().toString().substring(0, 8);
    Files.createDirectories(WORK);
    Path specFile = WORK.resolve(id + ".yaml");
    Files.writeString(specFile, specYaml(id));
    JobSpec spec = JobSpecReader.parse(specFile.toString(), Files.readString(specFile));
    Path statisticsFile = WORK.resolve(id + "-stats.yaml");
    Files.writeString(statisticsFile, statisticsYaml(id));
    JobSpec statistics =
        JobSpecReader.parse(statisticsFile.toString(), Files.readString(statisticsFile));
    Path javaUpdate = WORK.resolve("java-update.bin");
    Files.write(javaUpdate, ClientUpdates.encode(spec, 7, "cross-check-ü", crossCheckValues(spec)));
    Path javaEpsilons = WORK.resolve("java-epsilons.json");
    Files.writeString(javaEpsilons, javaEpsilons());
    Path report = WORK.resolve("pytest.xml");
    Files.deleteIfExists(report);
    startJob(List.of(spec, statistics), 1);

    String output =
        PythonEnvironment.run(
            List.of(
                python.toString(),
                "-m",
                "pytest",
                "clients/python/tests",
                "-p",
                "no:cacheprovider",
                "-ra",
                "--durations=5",
                "--junitxml=" + report),
            Map.of(
                "PRIVAGG_BOOTSTRAP_SERVERS", bootstrap,
                "PRIVAGG_SPEC", specFile.toString(),
                "PRIVAGG_STATISTICS_SPEC", statisticsFile.toString(),
                "PRIVAGG_JAVA_UPDATE", javaUpdate.toString(),
                "PRIVAGG_JAVA_EPSILONS", javaEpsilons.toString(),
                "PRIVAGG_REPO_ROOT", Path.of("").toAbsolutePath().toString()),
            WORK.resolve("pytest.log"),
            240);

    assertThat(output).contains("privagg_client from " + PythonEnvironment.VENV);
    String suite = Files.readString(report, StandardCharsets.UTF_8);
    assertThat(count(suite, "tests")).as(output).isGreaterThanOrEqualTo(70);
    assertThat(count(suite, "failures") + count(suite, "errors")).as(output).isZero();
    assertThat(count(suite, "skipped")).as("skipped tests; output:%n%s", output).isZero();
    assertThat(suite)
        .contains("test_encode_update_is_byte_identical_to_javas_client_updates_encode")
        .contains("test_three_clients_updates_are_averaged_into_the_released_model")
        .contains("test_run_takes_part_in_rounds_of_the_running_job")
        .contains("test_three_clients_rows_are_released_as_statistics_within_their_stated_noise")
        .contains("test_accountant_and_calibration_agree_with_the_java_privacy_core");
  }

  @Test
  void pythonClient_passesMypyStrict() throws Exception {
    Path python = PythonEnvironment.python();
    boolean installed = canImport(python, "mypy");
    if (!installed) {
      System.out.println(
          "PythonClientIT: mypy is not installed; the Python client's type check is skipped"
              + " (apt-get install python3-mypy, as .ci/run does)");
    }
    assumeTrue(
        installed,
        "mypy is not installed: apt-get install python3-mypy (.ci/run installs it) to type-check"
            + " the Python client");
    String output =
        PythonEnvironment.run(
            List.of(
                python.toString(),
                "-m",
                "mypy",
                "--config-file",
                "clients/python/pyproject.toml",
                "--cache-dir",
                WORK.resolve("mypy-cache").toString(),
                "clients/python/privagg_client"),
            Map.of(),
            WORK.resolve("mypy.log"),
            300);
    assertThat(output).contains("Success: no issues found");
  }

  /** Whether {@code python} can import {@code module}. */
  private static boolean canImport(Path python, String module) throws Exception {
    Process p =
        new ProcessBuilder(python.toString(), "-c", "import " + module)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS))
        .as("%s -c 'import %s' finished", python, module)
        .isTrue();
    return p.exitValue() == 0;
  }

  private static int count(String junitXml, String attribute) {
    Matcher m =
        Pattern.compile("<testsuite [^>]*\\b" + attribute + "=\"(\\d+)\"").matcher(junitXml);
    assertThat(m.find()).as("%s in the pytest report", attribute).isTrue();
    return Integer.parseInt(m.group(1));
  }
}
