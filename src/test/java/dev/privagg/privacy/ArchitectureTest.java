package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The math stays pure: no Flink, no Kafka, no other privagg package (STYLE 1); so does the round
 * lifecycle, which the Flink operator only adapts.
 */
class ArchitectureTest {
  /**
   * The math packages: privacy (mechanisms, accountants) and optimizer (server steps, which only
   * post-process the private average).
   */
  @ParameterizedTest
  @ValueSource(strings = {"privacy", "optimizer"})
  void mathPackage_importsNoFlinkKafkaOrOtherPrivaggPackage(String name) throws IOException {
    Path dir = Path.of("src/main/java/dev/privagg", name);
    List<Path> sources;
    try (Stream<Path> files = Files.list(dir)) {
      sources = files.filter(p -> p.toString().endsWith(".java")).toList();
    }
    List<String> offending =
        sources.stream()
            .flatMap(ArchitectureTest::importLines)
            .filter(
                line ->
                    line.contains("org.apache.flink")
                        || line.contains("org.apache.kafka")
                        || (line.contains("dev.privagg.")
                            && !line.contains("dev.privagg." + name + ".")))
            .toList();
    assertThat(sources).isNotEmpty();
    assertThat(offending).isEmpty();
  }

  @Test
  void roundLifecycle_importsNoFlink() throws IOException {
    Path job = Path.of("src/main/java/dev/privagg/job");
    List<String> offending =
        Stream.of(
                "RoundLifecycle",
                "RoundStore",
                "SeenClients",
                "HeldUpdates",
                "RoundDecisions",
                "ClosedRound",
                "JobProgress",
                "OpenRound",
                "DecodedUpdate",
                "LedgerCodec",
                "LedgerFloor",
                "ClientKeys")
            .map(name -> job.resolve(name + ".java"))
            .flatMap(ArchitectureTest::importLines)
            .filter(line -> line.contains("org.apache.flink") || line.contains("org.apache.kafka"))
            .toList();
    assertThat(offending).isEmpty();
  }

  private static Stream<String> importLines(Path file) {
    try {
      return Files.readAllLines(file).stream()
          .filter(l -> l.startsWith("import "))
          .map(l -> file.getFileName() + ": " + l);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
