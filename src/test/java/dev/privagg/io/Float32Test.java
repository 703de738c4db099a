package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class Float32Test {
  private static byte[] bytes(float[] values) {
    return Float32.write(values, 0, values.length).array();
  }

  @Test
  void firstNonFinite_isMinusOne_forExtremeButFiniteValues() {
    float[] values = new float[5003]; // blocks of 1024 floats, then an odd tail
    for (int i = 0; i < values.length; i++) {
      values[i] =
          switch (i % 5) {
            case 0 -> Float.MAX_VALUE;
            case 1 -> -Float.MAX_VALUE;
            case 2 -> Float.MIN_VALUE; // subnormal
            case 3 -> -0.0f;
            default -> 1e-30f * i;
          };
    }
    assertThat(Float32.firstNonFinite(bytes(values))).isEqualTo(-1);
  }

  @Test
  void firstNonFinite_findsTheFirstNanOrInfinity_whereverItIs() {
    for (int at : new int[] {0, 1, 1023, 1024, 2047, 4999, 5002}) {
      for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
        float[] values = new float[5003];
        values[at] = bad;
        assertThat(Float32.firstNonFinite(bytes(values))).as("%s at %d", bad, at).isEqualTo(at);
        assertThat(Float.compare(Float32.get(bytes(values), at), bad)).isZero();
      }
    }
    float[] two = new float[100];
    two[70] = Float.NaN;
    two[40] = Float.POSITIVE_INFINITY;
    assertThat(Float32.firstNonFinite(bytes(two))).isEqualTo(40);
  }

  @Test
  void bytes_sharesAnExactBackingArray_andCopiesASlice() {
    byte[] whole = {1, 2, 3, 4};
    assertThat(Float32.bytes(java.nio.ByteBuffer.wrap(whole))).isSameAs(whole);
    assertThat(Float32.bytes(java.nio.ByteBuffer.wrap(whole, 1, 2))).containsExactly(2, 3);
  }

  @Test
  void sumOfSquares_ofTheBytes_isBitForBitTheNormFlatClippingMeasures() {
    // The decoder's norm decides adaptive clipping's unclipped count, the shard's clip decides the
    // sum: the same values must give the same norm, in any length (lanes and remainder).
    java.util.SplittableRandom random = new java.util.SplittableRandom(4);
    for (int n : new int[] {0, 1, 3, 4, 5, 1001}) {
      float[] values = new float[n];
      for (int i = 0; i < n; i++) {
        values[i] = (float) (random.nextGaussian() * Math.pow(10, random.nextInt(-20, 20)));
      }
      double norm = Math.sqrt(Float32.sumOfSquares(Float32.write(values, 0, n).array()));
      double measured =
          dev.privagg.privacy.ClippingPolicy.flat(1.0).clip(new float[][] {values}).preClipNorm();
      assertThat(norm).as("n = %d", n).isEqualTo(measured);
    }
  }
}
