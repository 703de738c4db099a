package dev.privagg.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.io.Tensors;
import dev.privagg.io.UpdateReader;
import org.junit.jupiter.api.Test;

class BenchPlanTest {
  private static final long GB = 1_000_000_000L;
  private static final BenchPlan.Limits LIMITS =
      new BenchPlan.Limits(GB, 3 * GB / 2, 8 * GB, 24 * GB, 100, 3, 20);

  @Test
  void largeRounds_getOneWarmupAndOneMeasuredRound_andTheMinimumLiveRounds() {
    // d = 1M, m = 1000: 4 GB per round.
    BenchPlan plan = BenchPlan.of(new BenchSetting(1_000_000, 1000), 4_000_100, LIMITS);
    assertThat(plan.warmupRounds()).isEqualTo(1);
    assertThat(plan.measuredRounds()).isEqualTo(1);
    assertThat(plan.latencyRounds()).isEqualTo(3);
    assertThat(plan.skipped()).isFalse();
  }

  @Test
  void smallRounds_areCappedInWarmupMeasuredAndLiveRounds() {
    BenchPlan plan = BenchPlan.of(new BenchSetting(10_000, 10), 40_100, LIMITS);
    assertThat(plan.warmupRounds()).isEqualTo(BenchPlan.MAX_WARMUP_ROUNDS);
    assertThat(plan.measuredRounds()).isEqualTo(100);
    assertThat(plan.latencyRounds()).isEqualTo(20);
    assertThat(plan.preloadedRounds()).isEqualTo(110);
  }

  @Test
  void volumes_setTheRoundCounts_betweenTheBounds() {
    // d = 1M, m = 100: 0.4 GB per round; 1 GB warm-up -> 3 rounds, 1.5 GB -> 3, 8 GB -> 20.
    BenchPlan plan = BenchPlan.of(new BenchSetting(1_000_000, 100), 4_000_000, LIMITS);
    assertThat(plan.warmupRounds()).isEqualTo(3);
    assertThat(plan.measuredRounds()).isEqualTo(3);
    assertThat(plan.latencyRounds()).isEqualTo(20);
  }

  @Test
  void settingOverTheDiskBudget_isSkipped_withTheReason() {
    // d = 8M, m = 1000: 32 GB per round.
    BenchPlan plan = BenchPlan.of(new BenchSetting(8_000_000, 1000), 32_000_100, LIMITS);
    assertThat(plan.skipped()).isTrue();
    assertThat(plan.skipReason()).contains("160.0 GB").contains("--max-setting-gb");
  }

  @Test
  void limits_refuseInvertedLatencyBounds() {
    assertThatThrownBy(() -> new BenchPlan.Limits(GB, GB, GB, GB, 10, 5, 4))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxLatencyRounds must be >= minLatencyRounds (5), was 4");
  }

  @Test
  void template_readdressesTheSameRecord_toEachClient() throws Exception {
    float[] values = {1.5f, -2f, 0.25f};
    UpdateTemplate template = new UpdateTemplate("bench-job", 12, values);
    for (int client : new int[] {0, 7, 9_999_999}) {
      ClientUpdate update =
          UpdateReader.read(
              template.forClient(client).clone(), job -> new UpdateReader.Limits(256, 0, 1, 1, 64));
      assertThat(update.getClientId()).isEqualTo(UpdateTemplate.clientId(client));
      assertThat(update.getJobId()).isEqualTo("bench-job");
      assertThat(update.getRound()).isEqualTo(12);
      assertThat(Tensors.flatten(update.getTensors())).containsExactly(values);
    }
    assertThat(template.size()).isEqualTo(template.forClient(3).length);
  }

  @Test
  void template_refusesClientNumbersOutsideItsWidth() {
    assertThatThrownBy(() -> UpdateTemplate.clientId(10_000_000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("client must be in [0, 10000000), was 10000000");
  }

  @Test
  void percentiles_useNearestRank() {
    double[] sample = {5, 1, 4, 2, 3, 10, 9, 8, 7, 6};
    assertThat(Percentiles.of(sample, 50)).isEqualTo(5);
    assertThat(Percentiles.of(sample, 99)).isEqualTo(10);
    assertThat(Percentiles.of(sample, 10)).isEqualTo(1);
    assertThat(Percentiles.of(new double[] {42}, 99)).isEqualTo(42);
  }
}
