package dev.privagg.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.sim.EmbeddedKafka;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark harness end to end on a tiny setting: a real broker, the job in its own JVM, the
 * ceiling reads, live rounds, the job's REST metrics and GC log, and the three report files. A
 * setting over the disk budget is reported as skipped, not run.
 */
class BenchIT {
  @TempDir Path out;

  @Test
  void tinyGrid_measuresEveryFigure_andSkipsTheSettingOverBudget() throws Exception {
    BenchPlan.Limits limits = new BenchPlan.Limits(200_000, 400_000, 200_000, 2_000_000, 20, 2, 3);
    StringWriter log = new StringWriter();
    List<BenchResult> results;
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      results =
          Bench.run(
              List.of(
                  new BenchSetting(1000, 5, 1, 500, StateBackendKind.HASHMAP),
                  new BenchSetting(1000, 5, 2, 500, StateBackendKind.HASHMAP),
                  new BenchSetting(1000, 1000),
                  new BenchSetting(
                      1000, 5, 1, 500, StateBackendKind.HASHMAP, NoiseMechanismKind.BLT)),
              limits,
              kafka.bootstrapServers(),
              out,
              "512m",
              List.of(),
              false,
              new PrintWriter(log, true));
    }
    assertThat(results).hasSize(4);
    BenchResult run = results.get(0);
    assertThat(run.skipped()).as(log.toString()).isFalse();
    assertThat(run.measuredRounds()).isBetween(10, 20);
    assertThat(run.updatesPerSecond()).isPositive();
    assertThat(run.megabytesPerSecond())
        .isCloseTo(
            run.updatesPerSecond() * run.recordBytes() / 1e6,
            org.assertj.core.data.Percentage.withPercentage(1));
    assertThat(run.ceilingMegabytesPerSecond()).isPositive();
    assertThat(run.latencyRounds()).isEqualTo(3);
    // A model becomes visible at a checkpoint after its round closed: never before the last update.
    assertThat(run.latencyP50Millis()).isPositive().isLessThanOrEqualTo(run.latencyP99Millis());
    assertThat(run.heapPeakMb()).isPositive();
    assertThat(run.heapLivePeakMb()).isPositive().isLessThanOrEqualTo(run.heapPeakMb());
    assertThat(run.rssPeakMb()).isPositive();
    assertThat(run.stageShares()).containsOnlyKeys(BenchResult.STAGES);
    assertThat(run.stageShares().get("decode")).isPositive().isLessThan(1);
    assertThat(run.stageShares().get("clip")).isPositive().isLessThan(1);

    // Checkpoints every 500 ms over live rounds of about a second each: some completed.
    assertThat(run.checkpoints().completed()).isPositive();
    assertThat(run.checkpoints().megabytesPerSecond()).isPositive();
    assertThat(run.checkpoints().stateMegabytes()).isPositive();

    // Two partitions keyed by client id, two readers: every round still released its 5 updates
    // in order (the runner fails a run otherwise), and the ceiling had two consumers.
    BenchResult parallel = results.get(1);
    assertThat(parallel.skipped()).as(log.toString()).isFalse();
    assertThat(parallel.setting().parallelism()).isEqualTo(2);
    assertThat(parallel.updatesPerSecond()).isPositive();
    assertThat(log.toString()).contains("ceiling (2 plain consumers");
    assertThat(BenchReport.scaling(parallel, results, BenchResult::updatesPerSecond))
        .isCloseTo(
            parallel.updatesPerSecond() / run.updatesPerSecond(),
            org.assertj.core.data.Percentage.withPercentage(0.01));

    // Correlated noise: the noise blocks generate it, and it is set beside the same setting with
    // independent noise.
    BenchResult blt = results.get(3);
    assertThat(blt.skipped()).as(log.toString()).isFalse();
    assertThat(blt.stageShares().get("correlatedNoise")).isPositive();
    assertThat(run.stageShares().get("correlatedNoise")).isZero();
    assertThat(BenchReport.againstIndependent(blt, results, BenchResult::updatesPerSecond))
        .isCloseTo(
            blt.updatesPerSecond() / run.updatesPerSecond(),
            org.assertj.core.data.Percentage.withPercentage(0.01));

    assertThat(results.get(2).skipped()).isTrue();
    assertThat(results.get(2).skipReason()).contains("--max-setting-gb");

    assertThat(Files.readString(out.resolve("bench.md")))
        .contains("| 1k | 5 | 1 | 500 | hashmap |")
        .contains("| 1k | 5 | 2 | 500 | hashmap |")
        .contains("| 1k | 5 | 1 | 500 | hashmap | blt |")
        .contains("Correlated noise against independent noise")
        .contains(
            "d = 1k, m = 1000, p = 1, checkpoints every 1000 ms, hashmap, independent noise:");
    assertThat(Files.readAllLines(out.resolve("bench.csv"))).hasSize(5);
    assertThat(Files.size(out.resolve("bench.png"))).isPositive();
  }
}
