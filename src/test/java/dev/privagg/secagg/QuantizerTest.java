package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class QuantizerTest {
  private static final BigInteger NORM_BOUND_SQUARED = BigInteger.ONE.shiftLeft(72);

  private final SplittableRandom random = new SplittableRandom(2024);

  @ParameterizedTest(name = "clipNorm {0}")
  @ValueSource(doubles = {1.0, 0.5, 4.0, 3.0, 0.1})
  void valuesOnTheGrid_passThroughUnchanged(double clipNorm) {
    long[] expected = {0, 1, -1, 12345, -(1L << 20), 7};
    double[] update = new double[expected.length];
    for (int j = 0; j < expected.length; j++) {
      update[j] = expected[j] * clipNorm * 0x1p-36;
    }

    assertThat(new Quantizer(clipNorm).quantize(update, random)).containsExactly(expected);
  }

  @Test
  void tensors_areFlattenedInOrder() {
    float[][] update = {{0.5f, -0.25f}, {}, {0.125f}};

    assertThat(new Quantizer(8).quantize(update, random))
        .containsExactly(1L << 32, -(1L << 31), 1L << 30);
  }

  /**
   * The bound the sensitivity rests on, checked exactly (sum of squares in BigInteger): random
   * directions at, just under and far over the clip norm, with fair coins; and the worst case,
   * updates of one sign at the norm bound with coins that always round away from zero, so that
   * every coordinate moves by almost a whole unit outwards.
   */
  @Test
  void quantizedNorm_isAtMost2To36Units_forRandomAndAdversarialUpdates() {
    Quantizer quantizer = new Quantizer(1);
    RandomGenerator alwaysUp = () -> 0L; // nextDouble() == 0: rounds up whenever a is off-grid
    RandomGenerator alwaysDown = () -> -1L; // nextDouble() == 1 - 2^-53: rounds down
    for (int d : new int[] {1, 2, 3, 10, 1000, 100_000}) {
      double clipped = 1 - Math.sqrt(d) * 0x1p-36;
      for (double norm : new double[] {clipped, clipped * (1 - 1e-12), 1, 1e3, 1e300}) {
        double[] update = scaledTo(random.doubles(d, -1, 1).toArray(), norm);
        assertNormBound(quantizer.quantize(update, random));
      }
      for (double norm : new double[] {clipped, clipped * (1 - 1e-9), 1}) {
        double[] positive = scaledTo(random.doubles(d, 0, 1).toArray(), norm);
        double[] equal = new double[d];
        Arrays.fill(equal, norm / Math.sqrt(d));
        double[] negative = Arrays.stream(positive).map(v -> -v).toArray();
        assertNormBound(quantizer.quantize(positive, alwaysUp));
        assertNormBound(quantizer.quantize(equal, alwaysUp));
        assertNormBound(quantizer.quantize(negative, alwaysDown));
      }
    }
  }

  private static void assertNormBound(long[] units) {
    assertThat(squaredNorm(units))
        .as("d = %d", units.length)
        .isLessThanOrEqualTo(NORM_BOUND_SQUARED);
  }

  /**
   * Mean rounding error over 200,000 coordinates of one value with fraction f: the error is
   * Bernoulli(f) - f with standard deviation sqrt(f (1 - f) / n) <= 0.0011; the test allows 5
   * standard deviations, false-failure probability 6e-7 per fraction (the seed is fixed anyway).
   */
  @ParameterizedTest(name = "a = {0}")
  @ValueSource(doubles = {0.3, 0.5, 0.9, -2.7, 5.001})
  void rounding_isUnbiased(double a) {
    int n = 200_000;
    double[] update = new double[n];
    Arrays.fill(update, a * 0x1p-36 * 1e6);
    long[] units = new Quantizer(1e6).quantize(update, new SplittableRandom(99));

    double sum = 0;
    for (long unit : units) {
      assertThat(unit).isBetween((long) Math.floor(a), (long) Math.floor(a) + 1);
      sum += unit - a;
    }
    double f = a - Math.floor(a);
    assertThat(Math.abs(sum / n)).isLessThanOrEqualTo(5 * Math.sqrt(f * (1 - f) / n));
  }

  @Test
  void nonFiniteValues_areRefusedNamingTheCoordinate() {
    Quantizer quantizer = new Quantizer(1);

    assertThatThrownBy(() -> quantizer.quantize(new double[] {0, Double.NaN}, random))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("update[1] must be finite, was NaN");
    assertThatThrownBy(() -> quantizer.quantize(new float[][] {{Float.NEGATIVE_INFINITY}}, random))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("update[0] must be finite, was -Infinity");
  }

  @Test
  void clipNorm_mustBePositiveAndAtMost2To900() {
    for (double bad : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY, 0x1p901}) {
      assertThatThrownBy(() -> new Quantizer(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("clipNorm must be > 0 and <= 2^900, was " + bad);
    }
  }

  private static double[] scaledTo(double[] direction, double norm) {
    double sum = 0;
    for (double value : direction) {
      sum += value * value;
    }
    double scale = norm / Math.sqrt(sum);
    double[] out = new double[direction.length];
    for (int j = 0; j < out.length; j++) {
      out[j] = direction[j] * scale;
    }
    return out;
  }

  private static BigInteger squaredNorm(long[] units) {
    BigInteger sum = BigInteger.ZERO;
    for (long unit : units) {
      sum = sum.add(BigInteger.valueOf(unit).pow(2));
    }
    return sum;
  }
}
