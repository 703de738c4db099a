package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The job's main refuses initial models it would silently ignore, naming the flag. */
class InitArgumentsTest {
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
}
