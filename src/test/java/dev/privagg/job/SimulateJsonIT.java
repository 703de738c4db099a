package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.cli.CliTestAccess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code simulate --json} and {@code evaluate --json} through the real pipeline (a real broker and
 * the job on this class's MiniCluster, as SimulationIT runs it): every line of standard output is
 * one JSON object, the progress objects stream first and a summary comes last.
 */
class SimulateJsonIT extends KafkaFlinkTestBase {
  private static final String[] SMALL = {
    "--dataset",
    "digits",
    "--clients",
    "6",
    "--cohort",
    "3",
    "--rounds",
    "2",
    "--noise-source",
    "seeded",
    "--json"
  };

  private final ObjectMapper json = new ObjectMapper();

  @Test
  void simulate_json_printsOneObjectPerRound_thenTheSummary() throws Exception {
    List<JsonNode> lines = parse(CliTestAccess.run(with("simulate", "--noise-multiplier", "1.0")));
    assertThat(lines)
        .extracting(l -> l.get("type").asText())
        .containsExactly("round", "round", "summary");
    assertThat(lines.subList(0, 2))
        .extracting(l -> l.get("round").asLong())
        .containsExactly(1L, 2L);
    for (JsonNode round : lines.subList(0, 2)) {
      assertThat(round.get("clientsSent").asInt()).isEqualTo(6); // server sampling: all send
      assertThat(round.get("accuracy").asDouble()).isBetween(0.0, 1.0);
      assertThat(round.get("sentAfterDeadline").isBoolean()).isTrue();
    }
    double firstEpsilon = lines.get(0).get("epsilon").asDouble();
    JsonNode summary = lines.get(2);
    assertThat(firstEpsilon).isPositive().isLessThan(summary.get("epsilon").asDouble());
    assertThat(summary.get("epsilon").asDouble()).isEqualTo(lines.get(1).get("epsilon").asDouble());
    assertThat(summary.get("rounds").asInt()).isEqualTo(2);
    assertThat(summary.get("noiseMultiplier").asDouble()).isEqualTo(1.0);
    assertThat(summary.get("expectedClients").asInt()).isEqualTo(3);
    assertThat(summary.get("dataset").asText()).isEqualTo("digits");
    assertThat(summary.get("finalAccuracy").asDouble()).isBetween(0.0, 1.0);
    assertThat(summary.get("testSize").asInt()).isPositive();
    assertThat(summary.get("membershipAuc").asDouble()).isBetween(0.0, 1.0);
  }

  @Test
  void evaluate_json_printsOneObjectPerRun_thenTheSummary(@TempDir Path out) throws Exception {
    String stdout =
        CliTestAccess.run(
            with(
                "evaluate",
                "--noise-multipliers",
                "1.0",
                "--seeds",
                "1",
                "--central",
                "--central-epochs",
                "2",
                "--out",
                out.toString()));
    List<JsonNode> lines = parse(stdout);
    assertThat(lines)
        .extracting(l -> l.get("type").asText())
        .containsExactly("centralEpoch", "centralEpoch", "run", "run", "summary");
    List<JsonNode> runs = lines.subList(2, 4);
    assertThat(runs).extracting(r -> r.get("run").asInt()).containsExactly(1, 2);
    assertThat(runs).allSatisfy(r -> assertThat(r.get("runs").asInt()).isEqualTo(2));
    assertThat(runs)
        .extracting(r -> r.get("noiseMultiplier").asDouble())
        .containsExactlyInAnyOrder(1.0, 0.0);
    JsonNode baseline =
        runs.stream().filter(r -> r.get("noiseMultiplier").asDouble() == 0).findFirst().get();
    assertThat(baseline.get("epsilon").asText()).isEqualTo("Infinity"); // JSON has no literal
    JsonNode summary = lines.get(4);
    assertThat(summary.get("settings")).hasSize(2);
    for (JsonNode setting : summary.get("settings")) {
      assertThat(setting.get("seeds").asInt()).isEqualTo(1);
      assertThat(setting.get("accuracyCi95Low").asDouble())
          .isLessThanOrEqualTo(setting.get("accuracy").asDouble());
      assertThat(setting.get("accuracyInterval").asText()).startsWith("Wilson");
    }
    assertThat(summary.get("central").get("epochs").asInt()).isEqualTo(2);
    assertThat(summary.get("central").get("accuracy").asDouble()).isBetween(0.0, 1.0);
    assertThat(Path.of(summary.get("outputs").asText()).resolve("evaluation.json")).exists();
    assertThat(Files.readString(out.resolve("evaluation.csv"))).contains("non-private");
  }

  @Test
  void evaluate_variants_json_comparesAtOneEpsilon_eachWithItsPlannedNoise(@TempDir Path out)
      throws Exception {
    String stdout =
        CliTestAccess.run(
            with(
                "evaluate",
                "--variants",
                "fixed-sgd,adaptive-adam:0.05",
                "--target-epsilon",
                "8",
                "--clip-norm",
                "0.1",
                "--clip-count-noise",
                "1",
                "--seeds",
                "1",
                "--out",
                out.toString()));
    List<JsonNode> lines = parse(stdout);
    assertThat(lines)
        .extracting(l -> l.get("type").asText())
        .containsExactly("run", "run", "summary");
    assertThat(lines.subList(0, 2))
        .extracting(r -> r.get("variant").asText())
        .containsExactly("fixed-sgd", "adaptive-adam:0.05");
    JsonNode summary = lines.get(2);
    JsonNode fixed = summary.get("variants").get(0);
    JsonNode adaptive = summary.get("variants").get(1);
    assertThat(summary.get("targetEpsilon").asDouble()).isEqualTo(8.0);
    for (JsonNode v : List.of(fixed, adaptive)) {
      // Planned for the target: spent, within the planner's tolerance, but never more.
      assertThat(v.get("epsilon").asDouble()).isLessThanOrEqualTo(8.0).isGreaterThan(7.9);
      assertThat(v.get("accuracy").asDouble()).isBetween(0.0, 1.0);
    }
    assertThat(fixed.get("serverOptimizer").asText()).isEqualTo("sgd");
    assertThat(fixed.get("adaptiveClipping").asBoolean()).isFalse();
    assertThat(fixed.get("finalClipNorm").asDouble()).isEqualTo(0.1);
    assertThat(adaptive.get("serverOptimizer").asText()).isEqualTo("adam");
    assertThat(adaptive.get("serverLearningRate").asDouble()).isEqualTo(0.05);
    assertThat(adaptive.get("adaptiveClipping").asBoolean()).isTrue();
    // The noisy count is charged with the sum: more sum noise for the same epsilon.
    assertThat(adaptive.get("noiseMultiplier").asDouble())
        .isGreaterThan(fixed.get("noiseMultiplier").asDouble());
    assertThat(adaptive.get("finalClipNorm").asDouble()).isNotEqualTo(0.1);
    assertThat(Files.readString(out.resolve("comparison.csv")))
        .startsWith("variant,clipping,serverOptimizer")
        .contains("adaptive-adam:0.05,adaptive,adam,0.05");
    assertThat(out.resolve("comparison.json")).exists();
    assertThat(out.resolve("comparison.png")).exists();
  }

  private static String[] with(String command, String... args) {
    List<String> all = new ArrayList<>(List.of(command));
    all.addAll(List.of(args));
    all.addAll(List.of(SMALL));
    all.addAll(List.of("--bootstrap-servers", bootstrap));
    return all.toArray(String[]::new);
  }

  /** Each line of {@code out} as JSON; fails on any line that is not one JSON object. */
  private List<JsonNode> parse(String out) throws Exception {
    List<JsonNode> lines = new ArrayList<>();
    for (String line : out.lines().toList()) {
      JsonNode node = json.readTree(line);
      assertThat(node.isObject()).as("one JSON object per line: %s", line).isTrue();
      lines.add(node);
    }
    return lines;
  }
}
