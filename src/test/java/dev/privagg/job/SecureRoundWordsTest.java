package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A secure round remembers the words its clients masked, so that a restore under a spec of other
 * words (a change of privacy.mechanism or bitsPerCoordinate) ends it without a sum instead of
 * decoding 64-bit sums of un-noised inputs as distributed noise, or the other way round.
 */
class SecureRoundWordsTest {
  @Test
  void aRoundMatchesOnlyTheWordsItOpenedWith() {
    SecureRoundState s = new SecureRoundState();
    s.maskedWordBits = 18;
    s.maskedDimension = 1024;
    s.distributedPlan = "plan A";
    assertThat(s.masksLike(18, 1024, "plan A")).isTrue();
    assertThat(s.masksLike(18, 1024, "plan B")).as("other shares, same words").isFalse();
    assertThat(s.masksLike(16, 1024, "plan A")).isFalse();
    assertThat(s.masksLike(64, 1024, "")).isFalse();
    assertThat(s.masksLike(18, 2048, "plan A")).isFalse();
  }

  @Test
  void aRoundOfAnEarlierLayoutWas64BitAndMatchesNoDistributedNoise() {
    SecureRoundState restored = new SecureRoundState(); // as a layout before v5 reads it
    assertThat(restored.maskedWordBits).isEqualTo(64);
    assertThat(restored.maskedDimension).isEqualTo(-1);
    assertThat(restored.masksLike(64, 650, "")).isTrue();
    assertThat(restored.masksLike(18, 1024, "plan A")).isFalse();
    assertThat(restored.masksLike(64, 650, "plan A")).isFalse();
  }
}
