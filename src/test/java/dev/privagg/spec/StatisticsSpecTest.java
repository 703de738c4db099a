package dev.privagg.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.ClippingPolicy;
import dev.privagg.statistics.Block;
import dev.privagg.statistics.Statistic;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A {@code statistics} section: the model it releases, how it clips, and what it refuses. */
class StatisticsSpecTest {
  static final String STATISTICS =
      """
      jobId: cancer-stats
      statistics:
        maxRows: 3
        budgetWeights: {count: 1, sum: 2, sumOfSquares: 2, histogram: 3}
        features:
          - {name: radius, bounds: [5, 30], statistics: [mean, stddev]}
          - {name: texture, bounds: [9, 40], statistics: [histogram, quantiles], bins: 31,
             quantiles: [0.5, 0.9], weight: 2}
      rounds:
        timeout: 2s
        expectedClients: 50
      privacy:
        delta: 1e-5
        budgetEpsilon: 2
        targetEpsilon: 1
        plannedRounds: 2
        noise: {source: seeded, seed: 1}
      """;

  private static JobSpec parse(String yaml) {
    return JobSpecReader.parse("t", yaml);
  }

  @Test
  void statistics_releaseOneTensorPerBlock_clippedEachToItsShare() {
    JobSpec spec = parse(STATISTICS);
    assertThat(spec.statisticsJob()).isTrue();
    assertThat(spec.model().tensors())
        .extracting(JobSpec.TensorSpec::name)
        .containsExactly("count", "radius.sum", "radius.sumOfSquares", "texture.histogram");
    assertThat(spec.model().dimension()).isEqualTo(1 + 1 + 1 + 31);
    assertThat(spec.statistics().features().get(1).statistics())
        .containsExactlyInAnyOrder(Statistic.HISTOGRAM, Statistic.QUANTILES);
    assertThat(spec.statistics().features().get(1).binEdges()[1]).isEqualTo(10);
    assertThat(spec.serverOptimizer()).isEqualTo(ServerOptimizer.release());
    assertThat(spec.privacy().clipNorm()).isEqualTo(1);
    // weights 1, 2, 2 and 3 * 2 = 6 of 11: each block's bound is sqrt of its share.
    ClippingPolicy clipping = spec.clippingPolicy();
    assertThat(clipping.mode()).isEqualTo(ClippingPolicy.Mode.PER_LAYER);
    assertThat(clipping.layerBounds())
        .containsExactly(
            new double[] {
              Math.sqrt(1 / 11.0), Math.sqrt(2 / 11.0), Math.sqrt(2 / 11.0), Math.sqrt(6 / 11.0)
            },
            within(1e-12));
    List<Block> blocks = spec.statistics().blocks();
    assertThat(blocks.get(1).sensitivity()).isEqualTo(3 * 12.5);
    // Planned for the whole vector as one Gaussian per round, as a model would be.
    assertThat(spec.privacy().noiseMultiplier()).isGreaterThan(1);
  }

  @Test
  void statisticsSpec_travelsToTheTaskManagers_asJavaSerialization() throws Exception {
    JobSpec spec = parse(STATISTICS);
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bytes)) {
      out.writeObject(spec);
    }
    try (java.io.ObjectInputStream in =
        new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
      JobSpec copy = (JobSpec) in.readObject();
      assertThat(copy.statistics().blocks()).isEqualTo(spec.statistics().blocks());
      assertThat(copy.statistics().features().get(1).binEdges())
          .containsExactly(spec.statistics().features().get(1).binEdges());
    }
  }

  @Test
  void secureStatistics_clipFlatAtOne_asClientsDo() {
    String secure =
        STATISTICS
                .replace("timeout: 2s", "timeout: 30s\n  minimumCohort: {count: 150, noiseStd: 20}")
                .replace("expectedClients: 50", "expectedClients: 200")
            + "aggregation: {mode: secure}\n";
    JobSpec spec = parse(secure);
    assertThat(spec.clippingPolicy().mode()).isEqualTo(ClippingPolicy.Mode.FLAT);
    assertThat(spec.clippingPolicy().clipNorm()).isEqualTo(1);
  }

  @Test
  void statistics_refuseWhatTheyCannotUse_namingTheKeyAndTheFix() {
    assertThatThrownBy(
            () ->
                parse(STATISTICS.replace("jobId: cancer-stats", "jobId: x\nmodel: {tensors: []}")))
        .hasMessageContaining("statistics and model are both set");
    assertThatThrownBy(() -> parse(STATISTICS.replace("delta: 1e-5", "delta: 1e-5\n  clipNorm: 2")))
        .hasMessageContaining("privacy.clipNorm is set by the statistics section");
    assertThatThrownBy(() -> parse(STATISTICS + "server: {optimizer: adam}\n"))
        .hasMessageContaining("server is read only for model training");
    assertThatThrownBy(
            () -> parse(STATISTICS.replace("delta: 1e-5", "delta: 1e-5\n  mechanism: bandmf")))
        .hasMessageContaining("privacy.mechanism must be independent or distributed-discrete");
    assertThatThrownBy(
            () ->
                parse(
                    STATISTICS.replace(
                        "delta: 1e-5", "delta: 1e-5\n  adaptiveClipping: {targetQuantile: 0.5}")))
        .hasMessageContaining("privacy.adaptiveClipping is read only for model training");
    assertThatThrownBy(
            () -> parse(STATISTICS.replace("statistics: [mean, stddev]", "statistics: [median]")))
        .hasMessageContaining("statistics.features[0].statistics a statistic must be one of");
    assertThatThrownBy(() -> parse(STATISTICS.replace(", bins: 31,", ",")))
        .hasMessageContaining("statistics.features[1].bins or binEdges is needed");
    assertThatThrownBy(() -> parse(STATISTICS.replace("bounds: [5, 30]", "bound: [5, 30]")))
        .hasMessageContaining("statistics.features[0].bound is not a known key; did you mean")
        .hasMessageContaining("bounds");
    assertThatThrownBy(() -> parse(STATISTICS.replace("bounds: [5, 30]", "bounds: [30, 5]")))
        .hasMessageContaining("feature radius: bounds must be finite with lo < hi");
    assertThatThrownBy(() -> parse(STATISTICS.replace("maxRows: 3", "maxRows: 0")))
        .hasMessageContaining("statistics.maxRows");
    assertThatThrownBy(
            () ->
                parse(
                    STATISTICS.replace("jobId: cancer-stats\nstatistics:", "jobId: x\nstatistic:")))
        .hasMessageContaining("statistic is not a known key; did you mean statistics?");
  }
}
