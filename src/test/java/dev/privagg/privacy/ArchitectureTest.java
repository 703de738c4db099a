package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The privacy math stays pure: no Flink, no Kafka, no other privagg package (STYLE 1); so does the
 * round lifecycle, which the Flink operator only adapts.
 */
class ArchitectureTest {
  private static final Path PRIVACY = Path.of("src/main/java/dev/privagg/privacy");

  @Test
  void privacyPackage_importsNoFlinkKafkaOrOtherPrivaggPackage() throws IOException {
    List<String> offending;
    try (Stream<Path> files = Files.list(PRIVACY)) {
      offending =
          files
              .filter(p -> p.toString().endsWith(".java"))
              .flatMap(ArchitectureTest::importLines)
              .filter(
                  line ->
                      line.contains("org.apache.flink")
                          || line.contains("org.apache.kafka")
                          || (line.contains("dev.privagg.")
                              && !line.contains("dev.privagg.privacy")))
              .toList();
    }
    assertThat(Files.isDirectory(PRIVACY)).isTrue();
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
