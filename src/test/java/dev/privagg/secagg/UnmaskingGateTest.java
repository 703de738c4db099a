package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.apache.commons.statistics.distribution.NormalDistribution;
import org.junit.jupiter.api.Test;

/** The noisy count a secure round is unmasked behind (design.md invariant 12). */
class UnmaskingGateTest {
  private static final ThreatModel DEFAULT_RATES =
      RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server");

  @Test
  void theDeviate_isTheStandardNormalsUpperQuantileAt2ToTheMinus40() {
    // Q(7.045) = 9.2e-13, just below 2^-40 = 9.09e-13 at the fourth digit of the deviate.
    assertThat(UnmaskingGate.DEVIATE).isBetween(7.04, 7.05);
    assertThat(NormalDistribution.of(0, 1).survivalProbability(UnmaskingGate.DEVIATE))
        .isCloseTo(Math.pow(2, -40), org.assertj.core.data.Percentage.withPercentage(1e-6));
  }

  @Test
  void theMinimumCount_keepsEveryRosterTooSmallForAGraphBelowIt_butFor2ToTheMinus40() {
    for (double std : new double[] {0.05, 0.5, 1, 4, 12.5}) {
      double count = UnmaskingGate.minimumCount(DEFAULT_RATES, std);
      // Rosters of 4 (the largest without a graph) and below.
      double passes = NormalDistribution.of(4, std).survivalProbability(count);
      assertThat(passes).as("noiseStd %s, count %s", std, count).isLessThanOrEqualTo(0x1p-40);
      assertThat(UnmaskingGate.failureProbability(DEFAULT_RATES, count, std))
          .isLessThanOrEqualTo(0x1p-39);
    }
  }

  @Test
  void theGate_measuredOnRostersTooSmall_neverPassesThem_andPassesTheExpectedCohort() {
    // 10^6 draws at a roster of 4: the bound says none of them passes (a pass would take a
    // probability of 9e-7 to see, against the 2^-40 claimed); the expected cohort of 40 passes in
    // all but about 0.1% (false-failure probability of the bounds below: under 1e-6).
    double std = UnmaskingGate.suggestedNoiseStd(DEFAULT_RATES, 40);
    double count = UnmaskingGate.minimumCount(DEFAULT_RATES, std);
    Random random = new Random(40);
    int smallPassed = 0;
    int cohortWithheld = 0;
    for (int i = 0; i < 1_000_000; i++) {
      smallPassed += 4 + std * random.nextGaussian() >= count ? 1 : 0;
      cohortWithheld += 40 + std * random.nextGaussian() < count ? 1 : 0;
    }
    assertThat(smallPassed).isZero();
    assertThat(cohortWithheld).isBetween(1_000, 1_800);
  }

  @Test
  void theSuggestedNoiseStd_leavesThreeStdsBetweenTheCountAndTheExpectedCohort() {
    for (int expected : new int[] {6, 10, 40, 100, 1000}) {
      double std = UnmaskingGate.suggestedNoiseStd(DEFAULT_RATES, expected);
      double count = UnmaskingGate.minimumCount(DEFAULT_RATES, std);
      assertThat(expected - count).as("expected %d", expected).isGreaterThanOrEqualTo(2.99 * std);
    }
  }

  @Test
  void failureProbability_refusesANoiseStdThatIsNotPositive() {
    assertThatThrownBy(() -> UnmaskingGate.failureProbability(DEFAULT_RATES, 3, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("noiseStd must be > 0 and finite, was 0.0");
  }
}
