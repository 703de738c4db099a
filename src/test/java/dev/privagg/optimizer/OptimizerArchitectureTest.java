package dev.privagg.optimizer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The server optimizers are pure math: no Flink, no Kafka, no other privagg package (STYLE 1). */
class OptimizerArchitectureTest {
  private static final Path OPTIMIZER = Path.of("src/main/java/dev/privagg/optimizer");

  @Test
  void optimizerPackage_importsNoFlinkKafkaOrOtherPrivaggPackage() throws IOException {
    assertThat(Files.isDirectory(OPTIMIZER)).isTrue();
    List<Path> sources;
    try (Stream<Path> files = Files.list(OPTIMIZER)) {
      sources = files.filter(p -> p.toString().endsWith(".java")).toList();
    }
    List<String> offending =
        sources.stream()
            .flatMap(OptimizerArchitectureTest::importLines)
            .filter(
                line ->
                    line.contains("org.apache.flink")
                        || line.contains("org.apache.kafka")
                        || (line.contains("dev.privagg.")
                            && !line.contains("dev.privagg.optimizer")))
            .toList();
    assertThat(sources).isNotEmpty();
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
