package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ClippedSumTest {
  private static final int[] SHAPE = {64, 7};
  private final ClippingPolicy policy = ClippingPolicy.flat(1.5);

  @Test
  void sumIsBitIdentical_whateverOrderUpdatesArriveIn() {
    List<float[][]> updates = randomUpdates(200, 11);
    ClippedSum inOrder = sumOf(updates);
    List<float[][]> shuffled = new ArrayList<>(updates);
    Collections.shuffle(shuffled, new Random(3));
    assertThat(sumOf(shuffled).units()).isEqualTo(inOrder.units());
  }

  @Test
  void partialSumsMerged_equalOneSum() {
    List<float[][]> updates = randomUpdates(50, 5);
    ClippedSum left = sumOf(updates.subList(0, 20));
    left.addAll(sumOf(updates.subList(20, 50)));
    assertThat(left.units()).isEqualTo(sumOf(updates).units());
    assertThat(left.contributions()).isEqualTo(50);
  }

  @Test
  void oneClientsContribution_hasNormAtMostTheClipNorm() {
    // Sensitivity of the sum under add/remove-one: ||sum(all) - sum(all but one)|| <= C.
    List<float[][]> updates = new ArrayList<>(randomUpdates(30, 8));
    float[][] large = randomUpdates(1, 99).get(0);
    for (float[] tensor : large) {
      for (int i = 0; i < tensor.length; i++) {
        tensor[i] *= 100; // far outside the bound, so it is clipped
      }
    }
    updates.add(0, large);
    double[] with = sumOf(updates).toDoubles();
    double[] without = sumOf(updates.subList(1, updates.size())).toDoubles();
    double sq = 0;
    for (int i = 0; i < with.length; i++) {
      sq += (with[i] - without[i]) * (with[i] - without[i]);
    }
    // Clipping aims 2^-20 below the bound (floating-point margin), so the norm is just under C.
    assertThat(Math.sqrt(sq)).isLessThanOrEqualTo(1.5).isCloseTo(1.5, within(1.5e-5));
  }

  @Test
  void sumMatchesExactArithmetic_toFarBelowFloatResolution() {
    List<float[][]> updates = randomUpdates(40, 9);
    double[] expected = new double[64 + 7];
    for (float[][] update : updates) {
      ClipResult clip = policy.clip(update);
      int offset = 0;
      for (int t = 0; t < update.length; t++) {
        for (int i = 0; i < update[t].length; i++) {
          expected[offset + i] += update[t][i] * clip.scale(t);
        }
        offset += update[t].length;
      }
    }
    double[] actual = sumOf(updates).toDoubles();
    for (int i = 0; i < actual.length; i++) {
      assertThat(actual[i]).isCloseTo(expected[i], within(1e-9));
    }
  }

  @Test
  void nonFiniteUpdate_isRejected_andLeavesTheSumUnchanged() {
    ClippedSum sum = sumOf(randomUpdates(3, 1));
    long[] before = sum.units();
    float[][] bad = randomUpdates(1, 2).get(0);
    bad[1][3] = Float.POSITIVE_INFINITY;
    assertThatThrownBy(() -> sum.add(bad)).isInstanceOf(NonFiniteUpdateException.class);
    assertThat(sum.units()).isEqualTo(before);
    assertThat(sum.contributions()).isEqualTo(3);
  }

  @Test
  void clipNormWhoseFixedPointScaleOverflows_isRefused_insteadOfSummingFarPastTheBound() {
    // At C = 1e-300 the scale 2^36 / C is infinite: each value would become Long.MAX_VALUE units,
    // one update would weigh about 10^8 C, and the second would wrap the sum.
    for (double clipNorm : new double[] {1e-300, 9e-101, 2e100, Double.MAX_VALUE}) {
      assertThatThrownBy(() -> new ClippedSum(ClippingPolicy.flat(clipNorm), SHAPE))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "clipNorm must be in [1.0E-100, 1.0E100] for the fixed-point sum, was " + clipNorm);
    }
  }

  @Test
  void atBothEndsOfTheClipNormRange_oneClientsContribution_staysWithinTheBound() {
    for (double clipNorm : new double[] {ClippedSum.MIN_CLIP_NORM, ClippedSum.MAX_CLIP_NORM}) {
      ClippingPolicy edge = ClippingPolicy.flat(clipNorm);
      float[][] update = randomUpdates(1, 7).get(0);
      for (float[] tensor : update) {
        for (int i = 0; i < tensor.length; i++) {
          tensor[i] *= 1e30f; // clipped at the small C; inside the large one
        }
      }
      ClippedSum sum = new ClippedSum(edge, SHAPE);
      sum.add(update);
      sum.add(update);
      double sq = 0;
      for (double v : sum.toDoubles()) {
        assertThat(v).isFinite();
        sq += v * v;
      }
      assertThat(Math.sqrt(sq)).as("C = " + clipNorm).isLessThanOrEqualTo(2 * clipNorm);
    }
  }

  @Test
  void wrongShape_isRefusedWithBothSizes() {
    ClippedSum sum = new ClippedSum(policy, SHAPE);
    assertThatThrownBy(() -> sum.add(new float[][] {new float[64], new float[6]}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tensor 1 has 6 values, expected 7");
  }

  @Test
  void restore_reproducesTheCheckpointedSum() {
    ClippedSum sum = sumOf(randomUpdates(10, 4));
    ClippedSum restored = ClippedSum.restore(policy, SHAPE, sum.units(), sum.contributions());
    assertThat(restored.toDoubles()).isEqualTo(sum.toDoubles());
    assertThat(restored.contributions()).isEqualTo(10);
  }

  private ClippedSum sumOf(List<float[][]> updates) {
    ClippedSum sum = new ClippedSum(policy, SHAPE);
    for (float[][] update : updates) {
      sum.add(update);
    }
    return sum;
  }

  private static List<float[][]> randomUpdates(int count, long seed) {
    Random random = new Random(seed);
    List<float[][]> updates = new ArrayList<>();
    for (int n = 0; n < count; n++) {
      float[][] update = new float[SHAPE.length][];
      double scale = random.nextBoolean() ? 0.01 : 1.0; // a mix of clipped and unclipped updates
      for (int t = 0; t < SHAPE.length; t++) {
        update[t] = new float[SHAPE[t]];
        for (int i = 0; i < SHAPE[t]; i++) {
          update[t][i] = (float) (random.nextGaussian() * scale);
        }
      }
      updates.add(update);
    }
    return updates;
  }
}
