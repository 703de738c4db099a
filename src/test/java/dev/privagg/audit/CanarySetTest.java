package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CanarySetTest {
  static final byte[] SECRET = secret(7);

  static byte[] secret(int fill) {
    byte[] s = new byte[32];
    Arrays.fill(s, (byte) fill);
    return s;
  }

  @Test
  void direction_isAUnitVector_reproducibleFromTheSecret() {
    CanarySet a = new CanarySet(SECRET, 4);
    double[] u = a.direction(3, 1000);
    assertThat(Arrays.stream(u).map(x -> x * x).sum()).isCloseTo(1, within(1e-12));
    assertThat(new CanarySet(SECRET.clone(), 4).direction(3, 1000)).containsExactly(u);
    assertThat(new CanarySet(secret(8), 4).direction(3, 1000)).isNotEqualTo(u);
  }

  /**
   * Uniform directions in d = 4000 are nearly orthogonal: each cosine is about N(0, 1/d), so all 28
   * pairs of 8 canaries stay below 5.5/sqrt(d) except with probability 28 * 4e-8.
   */
  @Test
  void directions_ofDifferentCanaries_areNearlyOrthogonal() {
    int d = 4000;
    CanarySet set = new CanarySet(SECRET, 4);
    double[][] u = new double[8][];
    for (int i = 0; i < 8; i++) {
      u[i] = set.direction(i, d);
    }
    for (int i = 0; i < 8; i++) {
      for (int j = i + 1; j < 8; j++) {
        double dot = 0;
        for (int k = 0; k < d; k++) {
          dot += u[i][k] * u[j][k];
        }
        assertThat(Math.abs(dot)).as("cos(%d, %d)", i, j).isLessThan(5.5 / Math.sqrt(d));
      }
    }
  }

  @Test
  void unseenCanaries_areNeverSent() {
    CanarySet set = new CanarySet(SECRET, 2);
    assertThatThrownBy(() -> set.clientId("c-", 2)).hasMessageContaining("[0, 2)");
    assertThat(set.direction(3, 4)).hasSize(4);
    assertThatThrownBy(() -> set.direction(4, 4)).hasMessageContaining("[0, 4)");
  }

  @Test
  void clientIds_carryNoIndex_andDifferPerCanaryAndSecret() {
    CanarySet set = new CanarySet(SECRET, 50);
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < 50; i++) {
      String id = set.clientId("client-", i);
      assertThat(id).matches("client-[0-9a-f]{16}");
      ids.add(id);
    }
    assertThat(ids).hasSize(50);
    assertThat(new CanarySet(SECRET, 50).clientId("client-", 9))
        .isEqualTo(set.clientId("client-", 9))
        .isNotEqualTo(new CanarySet(secret(1), 50).clientId("client-", 9));
  }

  @Test
  void aShortSecretOrABadCount_isRefused() {
    assertThatThrownBy(() -> new CanarySet(new byte[31], 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the canary secret must hold at least 32 bytes, had 31");
    assertThatThrownBy(() -> new CanarySet(SECRET, 0))
        .hasMessage("canary count must be between 2 and 100000 (a spread needs two), was 0");
  }
}
