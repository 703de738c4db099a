package dev.privagg.job.decode;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.OpenRound;
import dev.privagg.privacy.ClippedSum;
import org.junit.jupiter.api.Test;

class ClientKeysTest {
  private final ClientKeys keys = new ClientKeys();

  @Test
  void keysAreFixedSize_equalForEqualIds_andDifferForDifferentIds() {
    assertThat(keys.of("")).hasSize(22);
    assertThat(keys.of("c".repeat(1_000_000))).hasSize(22);
    assertThat(keys.of("client-1")).isEqualTo(keys.of("client-1"));
    assertThat(keys.of("client-1")).isNotEqualTo(keys.of("client-2"));
    // SHA-256("abc") starts ba7816bf 8f01cfea 414140de 5dae2223 (FIPS 180-2, Appendix B.1).
    assertThat(keys.of("abc")).isEqualTo("ungWv48Bz+pBQUDeXa4iIw");
  }

  @Test
  void openRoundFromAnOlderVersion_isRescaledFrom40FractionBits() {
    OpenRound legacy = new OpenRound();
    legacy.units = new long[] {16L << 40, -(3L << 40), 31, -31};
    legacy.fractionBits = 0; // written before the scale was recorded
    OpenRound current = legacy.atCurrentScale();
    assertThat(current.fractionBits).isEqualTo(ClippedSum.FRACTION_BITS);
    // 2^40 units were one clip norm; now 2^36 are. Division truncates toward zero.
    assertThat(current.units).containsExactly(16L << 36, -(3L << 36), 1, -1);
    assertThat(OpenRound.empty().atCurrentScale().units).isNull();
  }
}
