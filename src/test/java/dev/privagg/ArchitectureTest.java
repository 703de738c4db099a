package dev.privagg;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The layout's rules, over packages rather than file lists, so a new class is checked where it
 * lands: the math stays pure, and in the job only adapters touch Flink.
 */
class ArchitectureTest {
  private static final Path SOURCES = Path.of("src/main/java/dev/privagg");

  /**
   * The math packages: privacy (mechanisms, accountants), optimizer (server steps, which only
   * post-process the private average), correlated (BLT matrix factorization) and secagg (the secure
   * aggregation protocol, shared by clients and job) and statistics (the bounded sums of a
   * statistics job and what is read from their release) import no Flink, no Kafka and no other
   * privagg package.
   */
  @ParameterizedTest
  @ValueSource(strings = {"privacy", "optimizer", "correlated", "secagg", "statistics"})
  void mathPackage_importsNoFlinkKafkaOrOtherPrivaggPackage(String name) throws IOException {
    assertThat(importsOutside(name, Set.of(name))).isEmpty();
  }

  /**
   * Distributed noise is math on top of both: the client's grid and the plan take the exact sampler
   * and the accounting from privacy and the rotation and word packing from secagg; no Flink, no
   * Kafka, nothing else of privagg.
   */
  @Test
  void distributedPackage_importsNoFlinkKafkaOrPrivaggButPrivacyAndSecagg() throws IOException {
    assertThat(importsOutside("distributed", Set.of("distributed", "privacy", "secagg"))).isEmpty();
  }

  /**
   * The audit's estimators and canaries are math too: no Flink, no Kafka; from privagg only the
   * privacy package, whose keyed stream draws the canaries and whose calibration the f-DP bound
   * uses. Reading topics and files is the command line's part.
   */
  @Test
  void auditPackage_importsNoFlinkKafkaOrPrivaggButPrivacy() throws IOException {
    assertThat(importsOutside("audit", Set.of("audit", "privacy"))).isEmpty();
  }

  /**
   * The import lines of package {@code name} (which must hold sources) that name Flink, Kafka or a
   * privagg package other than {@code allowed}.
   */
  private static List<String> importsOutside(String name, Set<String> allowed) throws IOException {
    List<Path> sources = javaFiles(SOURCES.resolve(name));
    assertThat(sources).as("sources of package %s", name).isNotEmpty();
    return sources.stream()
        .flatMap(ArchitectureTest::importLines)
        .filter(
            line ->
                line.contains("org.apache.flink")
                    || line.contains("org.apache.kafka")
                    || (line.contains("dev.privagg.")
                        && allowed.stream()
                            .noneMatch(p -> line.contains("dev.privagg." + p + "."))))
        .toList();
  }

  /**
   * Each stage of the job keeps its rules in classes without Flink, behind a thin adapter: a {@code
   * *Function} (the operator), its {@code *Metrics} and the decider's {@code DecisionEmitter}. The
   * wiring ({@code PrivaggJob}, {@code Pipeline}) and the packages that are adapters as a whole
   * (kafka: sources, sinks, serdes; state: checkpointed layouts; metrics) may import Flink too.
   * ShardPlan computes shard keys with Flink's own key-group assignment.
   */
  @Test
  void jobClassesOutsideAdapters_importNoFlink() throws IOException {
    Path job = SOURCES.resolve("job");
    Set<String> adapterPackages = Set.of("kafka", "state", "metrics");
    Set<String> adapterClasses = Set.of("PrivaggJob", "Pipeline", "DecisionEmitter", "ShardPlan");
    List<Path> sources;
    try (Stream<Path> files = Files.walk(job)) {
      sources = files.filter(p -> p.toString().endsWith(".java")).toList();
    }
    List<String> offending =
        sources.stream()
            .filter(
                p -> {
                  Path pkg = job.relativize(p).getParent();
                  String name = p.getFileName().toString().replace(".java", "");
                  boolean adapter =
                      (pkg != null && adapterPackages.contains(pkg.getName(0).toString()))
                          || adapterClasses.contains(name)
                          || name.endsWith("Function")
                          || name.endsWith("Metrics");
                  return !adapter;
                })
            .flatMap(ArchitectureTest::importLines)
            .filter(line -> line.contains("org.apache.flink"))
            .toList();
    assertThat(sources).hasSizeGreaterThan(40);
    assertThat(offending).as("Flink imports outside the job's adapters").isEmpty();
  }

  /** The stages a newcomer finds in the data-flow picture, each a package of its own. */
  @Test
  void jobHasOnePackagePerStage() throws IOException {
    try (Stream<Path> dirs = Files.list(SOURCES.resolve("job"))) {
      assertThat(dirs.filter(Files::isDirectory).map(p -> p.getFileName().toString()))
          .contains("kafka", "decode", "decide", "shard", "combine", "publish", "ledger");
    }
  }

  private static List<Path> javaFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".java")).toList();
    }
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
