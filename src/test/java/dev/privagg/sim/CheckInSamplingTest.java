package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Check-in participation under a (minSeparation, maxParticipations) schema. */
class CheckInSamplingTest {
  /** The Fashion-MNIST setting: 6,000 clients, 200 a round, b = 25, k = 12, 300 rounds. */
  private static final CheckInSampling FLEET = new CheckInSampling(6000, 200, 25, 12, 1);

  @Test
  void everyRound_takesExactlyTheCohort_whenTheSchemaCarriesIt() {
    CheckInSampling.Schedule s = FLEET.schedule(300);
    assertThat(s.firstShortRound()).isZero();
    assertThat(Arrays.stream(s.cohorts()).mapToInt(c -> c.length)).containsOnly(200);
    for (int[] round : s.cohorts()) {
      assertThat(round).isSorted().doesNotHaveDuplicates();
      assertThat(round[0]).isGreaterThanOrEqualTo(0);
      assertThat(round[round.length - 1]).isLessThan(6000);
    }
  }

  @Test
  void noClient_contributesSoonerThanMinSeparationOrMoreThanMaxParticipations() {
    CheckInSampling.Schedule s = FLEET.schedule(300);
    Map<Integer, Integer> last = new HashMap<>();
    for (int r = 1; r <= 300; r++) {
      for (int c : s.cohort(r)) {
        Integer before = last.put(c, r);
        if (before != null) {
          assertThat(r - before)
              .as("client %d in rounds %d and %d", c, before, r)
              .isGreaterThan(24);
        }
      }
    }
    assertThat(Arrays.stream(s.participations(6000)).max().orElseThrow()).isLessThanOrEqualTo(12);
  }

  @Test
  void minSeparationOne_allowsConsecutiveRounds() {
    CheckInSampling all = new CheckInSampling(10, 10, 1, 3, 5);
    CheckInSampling.Schedule s = all.schedule(4);
    assertThat(s.cohort(1)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    assertThat(s.cohort(3)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    // k = 3: nobody is left for round 4.
    assertThat(s.cohort(4)).isEmpty();
    assertThat(s.firstShortRound()).isEqualTo(4);
  }

  @Test
  void aSchemaThatCannotCarryTheCohort_namesTheFirstShortRound() {
    // b = 31 with 6,000 / 200 = 30 rounds to cycle everyone: round 31 finds nobody eligible.
    CheckInSampling tooSlow = new CheckInSampling(6000, 200, 31, 12, 1);
    assertThat(tooSlow.schedule(40).firstShortRound()).isEqualTo(31);
    // k = 9 gives 54,000 contributions for 300 x 200 = 60,000 needed.
    CheckInSampling tooFew = new CheckInSampling(6000, 200, 25, 9, 1);
    assertThat(tooFew.schedule(300).firstShortRound()).isBetween(2, 300);
  }

  @Test
  void theSameSeed_givesTheSameSchedule_anotherSeedAnother() {
    int[][] a = FLEET.schedule(50).cohorts();
    int[][] b = new CheckInSampling(6000, 200, 25, 12, 1).schedule(50).cohorts();
    int[][] c = new CheckInSampling(6000, 200, 25, 12, 2).schedule(50).cohorts();
    assertThat(a).isDeepEqualTo(b);
    assertThat(Arrays.deepEquals(a, c)).isFalse();
  }

  @Test
  void checkIns_spreadOverTheFleet() {
    // 60,000 contributions over 6,000 clients: 10 each on average, nobody left far behind (a
    // waiting client's chance grows as the eligible pool is only about 1,200 wide).
    int[] times = FLEET.schedule(300).participations(6000);
    assertThat(Arrays.stream(times).min().orElseThrow()).isGreaterThanOrEqualTo(5);
    assertThat(Arrays.stream(times).sum()).isEqualTo(60_000);
  }

  @Test
  void eligibility_followsTheSchema() {
    assertThat(FLEET.eligible(0, 0, 1)).isTrue();
    assertThat(FLEET.eligible(10, 1, 34)).isFalse();
    assertThat(FLEET.eligible(10, 1, 35)).isTrue();
    assertThat(FLEET.eligible(10, 12, 100)).isFalse();
  }

  @Test
  void badParameters_areRefusedByName() {
    assertThatThrownBy(() -> new CheckInSampling(100, 200, 25, 12, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cohort must be <= clients (100), was 200");
    assertThatThrownBy(() -> new CheckInSampling(100, 20, 0, 12, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("minSeparation");
  }
}
