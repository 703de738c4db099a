package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * The bound on a sum the server could not clip term by term: m clients clipped to C sum to a norm
 * of at most m C, so a longer sum is scaled back to m C, and a sum within it is left exactly as it
 * is.
 */
class SumBoundTest {
  private static double norm(double[] v) {
    double s = 0;
    for (double x : v) {
      s += x * x;
    }
    return Math.sqrt(s);
  }

  @Test
  void aSumWithinContributionsTimesC_isLeftBitForBit() {
    double[] sum = {0.3, -0.4, 1e-12};
    double[] before = sum.clone();

    assertThat(SumBound.scaleToNorm(sum, 1, 1.0)).isFalse();

    assertThat(sum).containsExactly(before);
  }

  @Test
  void aSumAtExactlyTheBound_isNotScaled() {
    double[] sum = {3, 4}; // norm 5 = 5 clients * C 1

    assertThat(SumBound.scaleToNorm(sum, 5, 1.0)).isFalse();

    assertThat(sum).containsExactly(3.0, 4.0);
  }

  @Test
  void aLongerSum_isScaledToContributionsTimesC_keepingItsDirection() {
    double[] sum = {30, -40, 0}; // norm 50

    assertThat(SumBound.scaleToNorm(sum, 2, 2.5)).isTrue();

    // Scaled to norm 2 * 2.5 = 5: (3, -4, 0).
    assertThat(sum[0]).isCloseTo(3.0, within(1e-12));
    assertThat(sum[1]).isCloseTo(-4.0, within(1e-12));
    assertThat(sum[2]).isZero();
    assertThat(norm(sum)).isCloseTo(5.0, within(5.0 * 1e-15));
  }

  @Test
  void noContributions_allowNoSum_soAnyNonZeroSumBecomesZero() {
    double[] sum = {1e-9, -2};

    assertThat(SumBound.scaleToNorm(sum, 0, 1.0)).isTrue();

    assertThat(sum).containsOnly(0.0, -0.0);
    double[] zero = {0, 0};
    assertThat(SumBound.scaleToNorm(zero, 0, 1.0)).isFalse();
  }

  @Test
  void aSumOfLargeValues_isMeasuredWithoutOverflow_andScaledToTheBound() {
    // 2^27 contributions at C = 1e100 (ClippedSum's largest): squares near 1e216 stay finite.
    double c = 1e100;
    long m = 1L << 27;
    double[] sum = new double[1000];
    java.util.Arrays.fill(sum, 2 * m * c);

    assertThat(SumBound.scaleToNorm(sum, m, c)).isTrue();

    assertThat(norm(sum) / (m * c)).isCloseTo(1.0, within(1e-12));
  }

  @Test
  void aNaNSum_isLeftAsItIs_neverSpreadToTheOtherCoordinatesByAScale() {
    // A sum decoded from integer units holds no NaN; were one there, its norm is NaN, which is
    // not "longer" than the bound: scaling by limit / NaN would make every coordinate NaN.
    double[] sum = {Double.NaN, 1, 2};

    assertThat(SumBound.scaleToNorm(sum, 1, 1.0)).isFalse();

    assertThat(sum[1]).isEqualTo(1.0);
    assertThat(sum[2]).isEqualTo(2.0);
  }

  @Test
  void fold_leavesEverySumOfHonestClientsAsItIs_andIsContinuousAcrossTheWrapAt2To63() {
    long c = 1L << 36; // C in units
    long[] honest = {3 * c, -3 * c, 0, 1};
    assertThat(SumBound.fold(honest, 3)).isFalse();
    assertThat(honest).containsExactly(3 * c, -3 * c, 0, 1);

    // Either side of the wrap, and either side of each bound: neighbours stay neighbours.
    long[][] neighbours = {
      {Long.MAX_VALUE, Long.MIN_VALUE},
      {3 * c, 3 * c + 1},
      {-3 * c - 1, -3 * c},
      {Long.MAX_VALUE - c, Long.MIN_VALUE + c},
    };
    for (long[] pair : neighbours) {
      long[] folded = pair.clone();
      SumBound.fold(folded, 3);
      long apart = pair[1] - pair[0]; // modulo 2^64
      assertThat(Math.abs(folded[1] - folded[0]))
          .as("%s folded to %s", java.util.Arrays.toString(pair), java.util.Arrays.toString(folded))
          .isLessThanOrEqualTo(Math.abs(apart) + 1);
      for (long v : folded) {
        assertThat(Math.abs(v)).isLessThanOrEqualTo(3 * c);
      }
    }
    long[] antipode = {Long.MIN_VALUE};
    assertThat(SumBound.fold(antipode, 3)).isTrue();
    assertThat(antipode[0]).as("2^63, the farthest from any honest sum, folds to 0").isZero();
  }
}
