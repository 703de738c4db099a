package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FlareFiltersTest {
  /**
   * FLARE's MinCountCleanser drops a site's sums when its count is below min_count; its
   * HistogramBinsCleanser drops a histogram when bins >= round(count * max_bins_percent / 100)
   * (both in nvflare/app_common/statistics). With the examples' 10 and 10%: 10 rows pass, 9 do not;
   * a 10-bin histogram needs a limit of 11, so 106 rows (105 rounds to 10, half to even).
   */
  @Test
  void examplesSettings_dropSmallSitesAndHistogramsOfFewRows() {
    FlareFilters f = FlareFilters.EXAMPLES;
    assertThat(f.releases(9)).isFalse();
    assertThat(f.releases(10)).isTrue();
    assertThat(f.releasesHistogram(105, 10)).isFalse();
    assertThat(f.releasesHistogram(106, 10)).isTrue();
    assertThat(f.releasesHistogram(115, 11)).as("11.5 rounds to 12").isTrue();
    assertThat(f.releasesHistogram(125, 12)).as("12.5 rounds to 12").isFalse();
    assertThat(f.releasesHistogram(9, 0)).as("a small site releases nothing").isFalse();
  }

  @Test
  void refusesSettingsFlareRefuses() {
    assertThatThrownBy(() -> new FlareFilters(-1, 10)).hasMessageContaining("minCount");
    assertThatThrownBy(() -> new FlareFilters(10, 101)).hasMessageContaining("maxBinsPercent");
  }
}
