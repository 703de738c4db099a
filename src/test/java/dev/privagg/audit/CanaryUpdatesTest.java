package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CanaryUpdatesTest {
  private static final int[] SIZES = {6, 4};

  /** Room for every direction, or for none: the updates must not tell the two apart. */
  private static CanaryUpdates updates(boolean keep) {
    return new CanaryUpdates(new CanarySet(CanarySetTest.SECRET, 2), SIZES, keep ? 1 << 20 : 0);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void update_isTheDirectionTwiceC_cutIntoTheSpecsTensors(boolean keep) {
    CanaryUpdates updates = updates(keep);
    assertThat(updates.keepsDirections()).isEqualTo(keep);
    float[][] update = updates.update(1, 0.5);
    assertThat(update[0]).hasSize(6);
    assertThat(update[1]).hasSize(4);
    double[] u = new CanarySet(CanarySetTest.SECRET, 2).direction(1, 10);
    double squares = 0;
    for (int i = 0; i < 10; i++) {
      float v = i < 6 ? update[0][i] : update[1][i - 6];
      assertThat((double) v).isCloseTo(CanarySet.NORM_OVER_CLIP * 0.5 * u[i], within(1e-6));
      squares += v * v;
    }
    assertThat(Math.sqrt(squares)).isCloseTo(CanarySet.NORM_OVER_CLIP * 0.5, within(1e-5));
    // Kept or drawn again, the same canary sends the same bits at the same C.
    assertThat(updates(!keep).update(1, 0.5)).isDeepEqualTo(update);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void unseenCanariesOrABadC_areRefused(boolean keep) {
    assertThatThrownBy(() -> updates(keep).update(2, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("only inserted canaries [0, 2) are sent, was 2");
    assertThatThrownBy(() -> updates(keep).update(0, Double.NaN))
        .hasMessage("clipNorm must be > 0 and finite, was NaN");
  }
}
