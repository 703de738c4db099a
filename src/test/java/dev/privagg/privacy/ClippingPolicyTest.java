package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ClippingPolicyTest {

  @Test
  void flat_clipsTheWholeUpdateToTheBound_andReportsThePreClipNorm() {
    float[][] update = {{3f}, {4f}};
    ClipResult result = ClippingPolicy.flat(1.0).clipInPlace(update);
    assertThat(result.preClipNorm()).isEqualTo(5.0);
    assertThat(result.clipped()).isTrue();
    assertThat(norm(update)).isLessThanOrEqualTo(1.0).isCloseTo(1.0, within(1e-5));
    assertThat(update[0][0] / update[1][0]).isCloseTo(0.75f, within(1e-6f)); // direction kept
  }

  @Test
  void flat_leavesAnUpdateInsideTheBoundUntouched() {
    float[][] update = {{0.3f, 0.4f}};
    ClipResult result = ClippingPolicy.flat(1.0).clipInPlace(update);
    assertThat(result.clipped()).isFalse();
    assertThat(result.scale(0)).isEqualTo(1.0);
    assertThat(update[0]).containsExactly(0.3f, 0.4f);
  }

  @Test
  void clippedNorm_neverExceedsTheBound_evenAfterFloatRounding() {
    SplittableRandom random = new SplittableRandom(7);
    ClippingPolicy policy = ClippingPolicy.flat(0.37);
    for (int trial = 0; trial < 2000; trial++) {
      float[][] update = {new float[1 + random.nextInt(300)], new float[1 + random.nextInt(50)]};
      for (float[] tensor : update) {
        for (int i = 0; i < tensor.length; i++) {
          tensor[i] = (float) (random.nextGaussian() * 10);
        }
      }
      policy.clipInPlace(update);
      assertThat(norm(update)).isLessThanOrEqualTo(0.37);
    }
  }

  @Test
  void perLayer_equalSplit_boundsSquaresSumToClipNormSquared() {
    ClippingPolicy policy =
        ClippingPolicy.perLayer(2.0, new int[] {10, 1000, 3}, ClippingPolicy.LayerSplit.EQUAL);
    double[] bounds = policy.layerBounds();
    for (double bound : bounds) {
      assertThat(bound).isCloseTo(2.0 / Math.sqrt(3), within(1e-15));
    }
    assertThat(bounds[0] * bounds[0] + bounds[1] * bounds[1] + bounds[2] * bounds[2])
        .isCloseTo(4.0, within(1e-12));
  }

  @Test
  void perLayer_sqrtSizeSplit_givesBoundsProportionalToSqrtSize() {
    ClippingPolicy policy =
        ClippingPolicy.perLayer(1.0, new int[] {1, 3}, ClippingPolicy.LayerSplit.SQRT_SIZE);
    assertThat(policy.layerBounds()[0]).isCloseTo(0.5, within(1e-12));
    assertThat(policy.layerBounds()[1]).isCloseTo(Math.sqrt(0.75), within(1e-12));
  }

  @Test
  void perLayer_clipsEachTensorToItsOwnBound_andTheWholeToClipNorm() {
    ClippingPolicy policy =
        ClippingPolicy.perLayer(1.0, new int[] {2, 2}, ClippingPolicy.LayerSplit.EQUAL);
    float[][] update = {{3f, 4f}, {0.1f, 0f}};
    ClipResult result = policy.clipInPlace(update);
    assertThat(result.clipped()).isTrue();
    assertThat(result.scale(1)).isEqualTo(1.0); // small tensor untouched
    assertThat(norm(new float[][] {update[0]})).isLessThanOrEqualTo(1 / Math.sqrt(2));
    assertThat(norm(update)).isLessThanOrEqualTo(1.0);
  }

  @Test
  void nonFiniteValue_isReportedWithItsPosition_neverSummed() {
    float[][] update = {{1f, 2f}, {0f, Float.NaN, 3f}};
    assertThatThrownBy(() -> ClippingPolicy.flat(1.0).clip(update))
        .isInstanceOf(NonFiniteUpdateException.class)
        .hasMessage("tensor 1 holds NaN at index 1");
    float[][] infinite = {{Float.NEGATIVE_INFINITY}};
    assertThatThrownBy(() -> ClippingPolicy.flat(1.0).clip(infinite))
        .isInstanceOf(NonFiniteUpdateException.class)
        .hasMessage("tensor 0 holds -Infinity at index 0");
  }

  @Test
  void largeButFiniteValues_areClippedNotRejected() {
    float[][] update = {{Float.MAX_VALUE, -Float.MAX_VALUE}};
    ClipResult result = ClippingPolicy.flat(1.0).clipInPlace(update);
    assertThat(result.clipped()).isTrue();
    assertThat(norm(update)).isLessThanOrEqualTo(1.0);
  }

  @Test
  void badClipNorm_isRefusedByName() {
    assertThatThrownBy(() -> ClippingPolicy.flat(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("clipNorm must be > 0 and finite, was NaN");
    assertThatThrownBy(() -> ClippingPolicy.flat(0))
        .hasMessage("clipNorm must be > 0 and finite, was 0.0");
  }

  static double norm(float[][] tensors) {
    double sum = 0;
    for (float[] tensor : tensors) {
      for (float v : tensor) {
        sum += (double) v * v;
      }
    }
    return Math.sqrt(sum);
  }
}
