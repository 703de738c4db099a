package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The io package depends on no other privagg package but the generated Avro classes (the spec reads
 * model files through it, so a dependency back would be a cycle), and the model file and schema
 * history classes import neither Flink nor Kafka.
 */
class ModelFilesArchitectureTest {
  private static final Path IO = Path.of("src/main/java/dev/privagg/io");
  private static final List<String> PURE =
      List.of(
          "FloatTensor",
          "FloatType",
          "Layout",
          "ModelFile",
          "ModelFileException",
          "Npy",
          "Npz",
          "Safetensors",
          "Shapes",
          "SchemaHistory",
          "BoundedAvro",
          "UpdateVersions");

  @Test
  void ioImportsNoOtherPrivaggPackage_andModelFilesNoFlinkOrKafka() throws IOException {
    List<String> offending;
    try (Stream<Path> files = Files.list(IO)) {
      offending =
          files
              .filter(p -> p.toString().endsWith(".java"))
              .flatMap(ModelFilesArchitectureTest::imports)
              .filter(
                  line ->
                      (line.contains("dev.privagg.") && !line.contains("dev.privagg.avro."))
                          || (PURE.contains(line.substring(0, line.indexOf(".java")))
                              && (line.contains("org.apache.flink")
                                  || line.contains("org.apache.kafka"))))
              .toList();
    }
    assertThat(PURE).allSatisfy(name -> assertThat(IO.resolve(name + ".java")).exists());
    assertThat(offending).isEmpty();
  }

  private static Stream<String> imports(Path file) {
    try {
      return Files.readAllLines(file).stream()
          .filter(l -> l.startsWith("import "))
          .map(l -> file.getFileName() + ": " + l);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
