package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FlareFiltersTest {
  /**
   * FLARE's MinCountCleanser drops a site when its count is below min_count; its
   * HistogramBinsCleanser when bins >= count * max_bins_percent / 100 (both in
   * nvflare/app_common/statistics). With the examples' 10 and 10%: 10 rows pass, 9 do not; a 10-bin
   * histogram needs more than 100 rows.
   */
  @Test
  void examplesSettings_dropSmallSitesAndHistogramsOfFewRows() {
    FlareFilters f = FlareFilters.EXAMPLES;
    assertThat(f.releases(9)).isFalse();
    assertThat(f.releases(10)).isTrue();
    assertThat(f.releasesHistogram(100, 10)).isFalse();
    assertThat(f.releasesHistogram(101, 10)).isTrue();
    assertThat(f.releasesHistogram(9, 0)).as("a small site releases nothing").isFalse();
  }

  @Test
  void refusesSettingsFlareRefuses() {
    assertThatThrownBy(() -> new FlareFilters(-1, 10)).hasMessageContaining("minCount");
    assertThatThrownBy(() -> new FlareFilters(10, 101)).hasMessageContaining("maxBinsPercent");
  }
}
