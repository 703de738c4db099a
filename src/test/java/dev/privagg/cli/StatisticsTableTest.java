package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.GlobalModel;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.Records;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import dev.privagg.statistics.ClientStatistics;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A statistics release as {@code privagg consume} prints, writes as JSON and draws it. */
class StatisticsTableTest {
  @TempDir Path dir;

  private static GlobalModel release() {
    JobSpec spec =
        JobSpecReader.parse(
            "t",
            """
            jobId: stats
            statistics:
              maxRows: 4
              features:
                - {name: x, bounds: [0, 4], statistics: [mean, histogram, quantiles], bins: 4,
                   quantiles: [0.5]}
            rounds: {timeout: 10s, expectedClients: 1}
            privacy: {noiseMultiplier: 0, delta: 1e-5, budgetEpsilon: .inf}
            """);
    float[][] blocks =
        ClientStatistics.encode(spec.statistics(), new double[][] {{0.5}, {1.5}, {1.5}, {3.5}});
    float[] weights = new float[spec.model().dimension()];
    int offset = 0;
    for (float[] b : blocks) {
      System.arraycopy(b, 0, weights, offset, b.length);
      offset += b.length;
    }
    return AvroCodec.decodeModel(
        Records.model(
                spec,
                1,
                weights,
                Double.POSITIVE_INFINITY,
                1,
                PrivacyLedger.of(PrivacyEvent.gaussian(0, 1)),
                PrivacyEvent.gaussian(0, 1),
                "zero",
                "d")
            .value);
  }

  @Test
  void table_printsEveryStatisticBinAndQuantile_withIntervals() {
    StringWriter text = new StringWriter();
    StatisticsTable.print(new PrintWriter(text, true), release().getStatistics());
    String out = text.toString();
    assertThat(out).contains("rows").contains("x").contains("mean").contains("1.75");
    assertThat(out).contains("[1, 2)").contains("[3, 4]").contains("quantile 0.5");
    assertThat(out).contains("budget: count");
  }

  @Test
  void json_holdsTheStatistics_withNaNAsNull() {
    Map<String, Object> json = StatisticsTable.json(release().getStatistics());
    assertThat(json).containsKeys("count", "features", "blocks", "expectedClients", "maxRows");
    assertThat(json.get("maxRows")).isEqualTo(4);
  }

  @Test
  void plot_drawsTheHistogramAndTheQuantiles_sideBySide() throws Exception {
    Path png = dir.resolve("stats.png");
    assertThat(StatisticsPlot.write(png, 1, release().getStatistics())).isTrue();
    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image.getWidth()).isEqualTo(1400);
  }
}
