package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CanaryScheduleTest {
  private final CanarySet canaries = new CanarySet(CanarySetTest.SECRET, 40);

  @Test
  void everyRound_sendsEveryCanaryInEveryRound() {
    CanarySchedule s = CanarySchedule.everyRound();
    assertThat(s.sends(canaries, 0, 1)).isTrue();
    assertThat(s.sends(canaries, 39, 1000)).isTrue();
  }

  /** The job's rule (r' - r >= b, at most k) holds for every canary, and each uses all k. */
  @Test
  void schema_neverBreaksTheParticipationLimits_andUsesThemAll() {
    int b = 3;
    int k = 4;
    CanarySchedule s = CanarySchedule.schema(b, k);
    int[] perRound = new int[31];
    for (int i = 0; i < 40; i++) {
      long last = Long.MIN_VALUE / 2;
      int count = 0;
      for (long r = 1; r <= 30; r++) {
        if (s.sends(canaries, i, r)) {
          assertThat(r - last).as("canary %d in round %d", i, r).isGreaterThanOrEqualTo(b);
          last = r;
          count++;
          perRound[(int) r]++;
        }
      }
      assertThat(count).isEqualTo(k);
    }
    // Staggered: rounds 1 to b * k see 40 / b canaries each, give or take one.
    for (int r = 1; r <= b * k; r++) {
      assertThat(perRound[r]).isBetween(13, 14);
    }
  }

  /**
   * 40 canaries x 500 rounds = 20,000 draws at rate 0.25: the count is within 5 standard deviations
   * (306) of 5,000 except with probability 6e-7.
   */
  @Test
  void poisson_sendsAtTheDeclaredRate_fromTheSecret() {
    CanarySchedule s = CanarySchedule.poisson(0.25);
    int sent = 0;
    for (int i = 0; i < 40; i++) {
      for (long r = 1; r <= 500; r++) {
        if (s.sends(canaries, i, r)) {
          sent++;
        }
      }
    }
    assertThat(sent).isBetween(5000 - 306, 5000 + 306);
    assertThat(s.sends(canaries, 3, 17))
        .isEqualTo(s.sends(new CanarySet(CanarySetTest.SECRET, 40), 3, 17));
  }

  @Test
  void badParameters_areRefused() {
    assertThatThrownBy(() -> CanarySchedule.poisson(0))
        .hasMessage("canary sampling rate must be in (0, 1], was 0.0");
    assertThatThrownBy(() -> CanarySchedule.schema(0, 2))
        .hasMessageContaining("minSeparation >= 1 and maxParticipations >= 1");
    assertThatThrownBy(() -> CanarySchedule.everyRound().sends(canaries, 0, 0))
        .hasMessageContaining("start at 1");
  }
}
