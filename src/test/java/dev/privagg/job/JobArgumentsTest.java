package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.spec.JobSpec;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The job's main arguments as privagg submit passes them: every spec, in order, and initial models
 * it would silently ignore refused, naming the flag.
 */
class JobArgumentsTest {
  private static final String ZEROS_SPEC =
      """
      jobId: plain
      model:
        tensors:
          - {name: w, shape: [2]}
        init: zeros
      rounds: {timeout: 5s, expectedClients: 2}
      privacy: {clipNorm: 1, noiseMultiplier: 1, delta: 1.0e-5, budgetEpsilon: 10}
      """;

  private static String[] base64Spec(String yaml) {
    return new String[] {
      "--spec-base64", Base64.getEncoder().encodeToString(yaml.getBytes(StandardCharsets.UTF_8))
    };
  }

  @Test
  void anInitForAJobThatDoesNotStartFromAFile_isRefused() {
    List<String[]> specs = List.<String[]>of(base64Spec(ZEROS_SPEC));
    assertThatThrownBy(() -> JobArguments.readSpecs(specs, Map.of("plain", new byte[8])))
        .hasMessageContaining("--init-base64 sends an initial model for job plain");
    assertThatThrownBy(() -> JobArguments.readSpecs(specs, Map.of("other", new byte[8])))
        .hasMessageContaining("job other, which no spec given here starts from a file");
  }

  @Test
  void anInitThatIsNotBase64_namesTheFlag() {
    assertThatThrownBy(() -> PrivaggJob.main(new String[] {"--init-base64", "plain=@@@"}))
        .hasMessageStartingWith("--init-base64 plain=...: not base64");
  }

  @Test
  void repeatedSpecs_areAllRead_inTheOrderGiven() {
    String[] first = base64Spec(ZEROS_SPEC);
    String[] second = base64Spec(ZEROS_SPEC.replace("jobId: plain", "jobId: second"));
    JobArguments arguments =
        JobArguments.parse(
            new String[] {
              second[0],
              second[1],
              "--bootstrap-servers",
              "localhost:1",
              first[0],
              first[1],
              "--checkpoint-interval-ms",
              "250"
            });
    assertThat(arguments.specs()).extracting(JobSpec::jobId).containsExactly("second", "plain");
    assertThat(arguments.checkpointIntervalMillis()).isEqualTo(250);
  }

  @Test
  void withoutBrokersOrSpecs_isRefusedWithTheUsage() {
    assertThatThrownBy(() -> JobArguments.parse(base64Spec(ZEROS_SPEC)))
        .hasMessageContaining("give --bootstrap-servers")
        .hasMessageContaining("Usage:");
    assertThatThrownBy(
            () -> JobArguments.parse(new String[] {"--bootstrap-servers", "h:1", "--unknown", "x"}))
        .hasMessageContaining("--unknown");
  }
}
