package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A shard's sum of masked inputs (docs/secure-aggregation.md, Masks): 64-bit little-endian words
 * added modulo 2^64, where masks that cancel in the sum cancel exactly whatever they wrapped.
 */
class MaskedSumTest {
  private static byte[] littleEndian(long... words) {
    ByteBuffer out = ByteBuffer.allocate(8 * words.length).order(ByteOrder.LITTLE_ENDIAN);
    out.asLongBuffer().put(words);
    return out.array();
  }

  @Test
  void wordsAreReadLittleEndian() {
    long[] units = new long[2];
    byte[] words = new byte[16];
    words[0] = 1; // word 0 = 1
    words[15] = 1; // word 1 = 2^56

    MaskedSum.add(units, words);

    assertThat(units).containsExactly(1L, 1L << 56);
  }

  @Test
  void additionWrapsModulo2To64_inBothDirections() {
    long[] units = {Long.MAX_VALUE, -1, Long.MIN_VALUE, 0};

    MaskedSum.add(units, littleEndian(1, 1, -1, -1));

    assertThat(units).containsExactly(Long.MIN_VALUE, 0L, Long.MAX_VALUE, -1L);
  }

  @Test
  void masksThatCancel_leaveTheExactSumOfTheInputs_whateverTheyWrapped() {
    SplittableRandom random = new SplittableRandom(7);
    int d = 1000;
    long[] x = new long[d];
    long[] y = new long[d];
    long[] maskedX = new long[d];
    long[] maskedY = new long[d];
    for (int j = 0; j < d; j++) {
      x[j] = random.nextLong(-(1L << 36), 1L << 36);
      y[j] = random.nextLong(-(1L << 36), 1L << 36);
      long mask = random.nextLong(); // uniform over all 2^64 words: most sums overflow
      maskedX[j] = x[j] + mask;
      maskedY[j] = y[j] - mask;
    }
    long[] units = new long[d];

    MaskedSum.add(units, littleEndian(maskedX));
    MaskedSum.add(units, littleEndian(maskedY));

    for (int j = 0; j < d; j++) {
      assertThat(units[j]).as("coordinate %d", j).isEqualTo(x[j] + y[j]);
    }
  }

  @Test
  void aMaskedInputOfAnotherLength_isRefused_namingBothLengths_andTheSumIsUntouched() {
    long[] units = {5, 6, 7};
    for (int bytes : new int[] {0, 23, 25, 16, 32}) {
      assertThatThrownBy(() -> MaskedSum.add(units, new byte[bytes]))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("masked input has " + bytes + " bytes, expected 24");
    }
    assertThat(units).containsExactly(5L, 6L, 7L);
  }

  @Test
  void anEmptyModel_takesAnEmptyMaskedInput() {
    long[] units = new long[0];

    MaskedSum.add(units, new byte[0]);

    assertThat(units).isEmpty();
  }
}
