package dev.privagg.statistics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClientStatisticsTest {
  private static final Feature X =
      new Feature(
          "x",
          0,
          10,
          EnumSet.allOf(Statistic.class),
          new double[] {0, 2, 5, 10},
          new double[] {0.5},
          1);
  private static final StatisticsQuery QUERY = new StatisticsQuery(4, List.of(X), null);

  /** Unscales a client's blocks, as the estimator does with m = 1 and no noise. */
  private static double[] natural(float[][] blocks, int block) {
    Block b = QUERY.blocks().get(block);
    double[] out = new double[blocks[block].length];
    for (int j = 0; j < out.length; j++) {
      out[j] = blocks[block][j] / b.scale();
    }
    return out;
  }

  @Test
  void encode_centresClipsAndCaps_soTheUnscaledBlocksAreTheBoundedSums() {
    // The fifth row is past maxRows = 4 and left out; -3 clips to 0 and 12 to 10.
    double[][] rows = {{1}, {-3}, {12}, {5}, {7}};
    float[][] blocks = ClientStatistics.encode(QUERY, rows);
    assertThat(natural(blocks, 0)[0]).isCloseTo(4, within(1e-5));
    // centred on 5: -4, -5, 5, 0
    assertThat(natural(blocks, 1)[0]).isCloseTo(-4, within(1e-4));
    // squares minus h^2 / 2 = 12.5: 3.5, 12.5, 12.5, -12.5
    assertThat(natural(blocks, 2)[0]).isCloseTo(16, within(1e-3));
    // bins [0, 2), [2, 5), [5, 10]: 1, 0, 12 -> bin 0, 0, 2, and 5 -> bin 2
    assertThat(natural(blocks, 3)).containsExactly(new double[] {2, 0, 2}, within(1e-5));
  }

  @Test
  void encode_ofTheWorstClient_staysWithinEachBlocksShare_andNormOne() {
    for (double value : new double[] {0, 10}) {
      double[][] rows = {{value}, {value}, {value}, {value}};
      float[][] blocks = ClientStatistics.encode(QUERY, rows);
      double total = 0;
      for (int b = 0; b < blocks.length; b++) {
        double squares = 0;
        for (float v : blocks[b]) {
          squares += (double) v * v;
        }
        assertThat(Math.sqrt(squares))
            .isLessThan(Math.sqrt(QUERY.blocks().get(b).share()) * (1 - 0x1p-20));
        total += squares;
      }
      // Each block at its bound: the whole contribution just under the clip norm 1.
      assertThat(Math.sqrt(total)).isLessThan(1).isGreaterThan(0.99);
    }
  }

  @Test
  void encode_refusesNaNAndRaggedRows_namingRowAndFeature() {
    assertThatThrownBy(() -> ClientStatistics.encode(QUERY, new double[][] {{1}, {Double.NaN}}))
        .hasMessage("row 1, feature x: value is NaN");
    assertThatThrownBy(() -> ClientStatistics.encode(QUERY, new double[][] {{1, 2}}))
        .hasMessageContaining("row 0 must hold one value per feature [x], had 2");
  }

  @Test
  void negativeZero_fallsInTheBinThatStartsAtZero_asInTheDocsAndThePythonClient() {
    Feature f =
        new Feature(
            "y",
            -1,
            1,
            java.util.EnumSet.of(Statistic.HISTOGRAM),
            new double[] {-1, 0, 1},
            null,
            1);
    assertThat(f.bin(-0.0)).isEqualTo(1);
    assertThat(f.bin(0.0)).isEqualTo(1);
    assertThat(f.bin(-Double.MIN_VALUE)).isEqualTo(0);
    assertThat(f.bin(1)).isEqualTo(1);
  }

  @Test
  void encode_ofNoRows_isAllZero() {
    float[][] blocks = ClientStatistics.encode(QUERY, new double[0][]);
    for (float[] block : blocks) {
      for (float v : block) {
        assertThat(v).isZero();
      }
    }
  }
}
