package dev.privagg.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchReportTest {
  @TempDir Path dir;

  @Test
  void scaling_isThroughputOverTheSameSettingAtParallelismOne() {
    BenchResult one = result(new BenchSetting(10_000, 100, 1, 250, StateBackendKind.HASHMAP), 1000);
    BenchResult two = result(new BenchSetting(10_000, 100, 2, 250, StateBackendKind.HASHMAP), 1800);
    BenchResult otherInterval =
        result(new BenchSetting(10_000, 100, 2, 1000, StateBackendKind.HASHMAP), 2000);
    List<BenchResult> all = List.of(one, two, otherInterval);

    assertThat(BenchReport.scaling(two, all, BenchResult::updatesPerSecond)).isEqualTo(1.8);
    assertThat(BenchReport.scaling(one, all, BenchResult::updatesPerSecond)).isEqualTo(1.0);
    // No run at p = 1 with checkpoints every 1000 ms: no base, no figure.
    assertThat(BenchReport.scaling(otherInterval, all, BenchResult::updatesPerSecond)).isNaN();
    assertThat(BenchReport.markdown(all))
        .contains("| 10k | 100 | 2 | 250 | hashmap | independent | 1800 |")
        .contains("| 1.80 |")
        .contains("| - |");
  }

  @Test
  void write_plotsEveryAxis_whenParallelismAndIntervalsVary() throws Exception {
    List<BenchResult> all =
        List.of(
            result(new BenchSetting(10_000, 10, 1, 100, StateBackendKind.HASHMAP), 500),
            result(new BenchSetting(10_000, 10, 2, 100, StateBackendKind.HASHMAP), 900),
            result(new BenchSetting(10_000, 10, 1, 1000, StateBackendKind.HASHMAP), 600),
            result(new BenchSetting(10_000, 10, 2, 1000, StateBackendKind.HASHMAP), 1000),
            result(new BenchSetting(1_000_000, 10, 1, 100, StateBackendKind.HASHMAP), 50),
            result(new BenchSetting(1_000_000, 10, 2, 100, StateBackendKind.HASHMAP), 90));
    BenchReport.write(dir, all);
    assertThat(Files.size(dir.resolve("bench.png"))).isPositive();
    assertThat(Files.readAllLines(dir.resolve("bench.csv")))
        .hasSize(7)
        .element(2)
        .asString()
        .startsWith("10000,10,2,100,hashmap,")
        .contains(",1.800,");
  }

  @Test
  void settingName_namesEveryAxis_soEveryRunHasTopicsOfItsOwn() {
    assertThat(new BenchSetting(1_000_000, 100, 2, 250, StateBackendKind.ROCKSDB).name())
        .isEqualTo("d1000000-m100-p2-c250-rocksdb");
    assertThat(new BenchSetting(10_000, 10).name()).isEqualTo("d10000-m10-p1-c1000-hashmap");
    assertThat(
            new BenchSetting(10_000, 10, 1, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.BLT)
                .name())
        .isEqualTo("d10000-m10-p1-c1000-hashmap-blt");
  }

  @Test
  void bltSetting_isGivenOverItsIndependentTwin_inTheCsvAndASecondTable() throws Exception {
    BenchSetting independent = new BenchSetting(8_000_000, 10, 2, 1000, StateBackendKind.HASHMAP);
    BenchSetting blt =
        new BenchSetting(8_000_000, 10, 2, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.BLT);
    BenchResult base = result(independent, 10);
    BenchResult correlated = withLatencyAndCheckpoints(result(blt, 8), 3000, 3300, 600);
    BenchResult lonely =
        result(
            new BenchSetting(
                8_000_000, 10, 1, 1000, StateBackendKind.HASHMAP, NoiseMechanismKind.BLT),
            9);
    List<BenchResult> all = List.of(base, correlated, lonely);

    assertThat(BenchReport.againstIndependent(correlated, all, BenchResult::latencyP50Millis))
        .isCloseTo(3000.0 / 1050, within(1e-12));
    assertThat(
            BenchReport.againstIndependent(
                correlated, all, r -> r.checkpoints().megabytesPerRound()))
        .isEqualTo(300.0);
    assertThat(BenchReport.againstIndependent(correlated, all, BenchResult::updatesPerSecond))
        .isEqualTo(0.8);
    // Independent noise has no twin, nor has a blt setting whose twin was not run.
    assertThat(BenchReport.againstIndependent(base, all, BenchResult::updatesPerSecond)).isNaN();
    assertThat(BenchReport.againstIndependent(lonely, all, BenchResult::updatesPerSecond)).isNaN();

    assertThat(BenchReport.markdown(all))
        .contains("| 8M | 10 | 2 | 1000 | hashmap | blt | 8 |")
        .contains("Correlated noise against independent noise")
        .contains(
            "| 8M | 10 | 2 | 1000 | hashmap | 3000 / 1050 ms | 2.86 | 3300 / 1090 ms | 3.03 |"
                + " 600.0 / 2.0 | 300.00 | 8.0 / 10.0 | 0.80 |");
    assertThat(BenchReport.markdown(List.of(base))).doesNotContain("Correlated noise");
    BenchReport.write(dir, all);
    List<String> csv = Files.readAllLines(dir.resolve("bench.csv"));
    assertThat(csv.get(0)).contains(",state_backend,mechanism,record_bytes,");
    assertThat(csv.get(1)).startsWith("8000000,10,2,1000,hashmap,independent,");
    assertThat(csv.get(2))
        .startsWith("8000000,10,2,1000,hashmap,blt,")
        .endsWith(",2.857,3.028,300.000,0.800,");
  }

  @Test
  void stateBackend_isParsedByItsFlinkName_andAnUnknownOneIsRefused() {
    assertThat(StateBackendKind.of("RocksDB")).isEqualTo(StateBackendKind.ROCKSDB);
    assertThatThrownBy(() -> StateBackendKind.of("forst"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("state backend must be hashmap or rocksdb, was 'forst'");
  }

  @Test
  void jobConfiguration_hasASlotPerSubtask_andIncrementalCheckpointsForRocksDb() {
    Configuration rocks =
        BenchJobMain.configuration(4711, dir.resolve("checkpoints"), 3, StateBackendKind.ROCKSDB);
    Map<String, String> map = rocks.toMap();
    assertThat(map)
        .containsEntry("taskmanager.numberOfTaskSlots", "3")
        .containsEntry("parallelism.default", "3")
        .containsEntry("state.backend.type", "rocksdb")
        .containsEntry("execution.checkpointing.incremental", "true")
        .containsEntry("rest.port", "4711");
    assertThat(
            BenchJobMain.configuration(
                    4711, dir.resolve("checkpoints"), 1, StateBackendKind.HASHMAP)
                .toMap())
        .containsEntry("state.backend.type", "hashmap")
        .doesNotContainKey("execution.checkpointing.incremental");
  }

  private static BenchResult withLatencyAndCheckpoints(
      BenchResult r, double p50, double p99, double checkpointMbPerRound) {
    return new BenchResult(
        r.setting(),
        r.recordBytes(),
        r.measuredRounds(),
        r.updatesPerSecond(),
        r.megabytesPerSecond(),
        r.ceilingMegabytesPerSecond(),
        r.latencyRounds(),
        p50,
        p99,
        r.heapPeakMb(),
        r.heapLivePeakMb(),
        r.rssPeakMb(),
        r.stageShares(),
        new BenchResult.Checkpoints(
            r.checkpoints().completed(),
            r.checkpoints().megabytesPerSecond(),
            checkpointMbPerRound,
            r.checkpoints().stateMegabytes()),
        null);
  }

  private static BenchResult result(BenchSetting setting, double updatesPerSecond) {
    long recordBytes = 4L * setting.dimension() + 100;
    return new BenchResult(
        setting,
        recordBytes,
        10,
        updatesPerSecond,
        updatesPerSecond * recordBytes / 1e6,
        2 * updatesPerSecond * recordBytes / 1e6,
        5,
        setting.checkpointMillis() + 50,
        setting.checkpointMillis() + 90,
        500,
        50,
        900,
        Map.of("decode", 0.1, "clip", 0.05, "noise", 0.01, "correlatedNoise", 0.0, "encode", 0.01),
        new BenchResult.Checkpoints(
            20, 100.0 / setting.checkpointMillis(), 2, 0.1 * setting.dimension() / 1e4),
        null);
  }
}
