package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.apache.commons.statistics.distribution.LogNormalDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Adaptive clipping, Andrew et al. 2021, Algorithm 1: the sign, the release and convergence. */
class AdaptiveClippingTest {
  private static final int M = 100;
  private static final double SIGMA_B = M / 20.0;
  private static final double NO_NOISE = 0;

  private static AdaptiveClipping clipping(double targetQuantile) {
    return AdaptiveClipping.of(targetQuantile, 0.2, 1.0, SIGMA_B);
  }

  @Test
  void clipNormGrows_whenEveryUpdateWasClipped_belowTheTargetQuantile() {
    AdaptiveClipping clipping = clipping(0.9);
    double fraction = clipping.noisyUnclippedFraction(0, M, NO_NOISE, M);

    assertThat(fraction).isZero();
    // C exp(-0.2 (0 - 0.9)) = C exp(0.18)
    assertThat(clipping.nextClipNorm(1.0, fraction))
        .isGreaterThan(1.0)
        .isCloseTo(Math.exp(0.18), within(1e-15));
  }

  @Test
  void clipNormShrinks_whenNoUpdateWasClipped_aboveTheTargetQuantile() {
    AdaptiveClipping clipping = clipping(0.5);
    double fraction = clipping.noisyUnclippedFraction(M, M, NO_NOISE, M);

    assertThat(fraction).isEqualTo(1.0);
    // C exp(-0.2 (1 - 0.5)) = C exp(-0.1)
    assertThat(clipping.nextClipNorm(1.0, fraction))
        .isLessThan(1.0)
        .isCloseTo(Math.exp(-0.1), within(1e-15));
  }

  @ParameterizedTest
  @ValueSource(ints = {30, 50, 90})
  void clipNormIsUnchanged_exactlyAtTheTargetQuantile(int unclipped) {
    AdaptiveClipping clipping = clipping(unclipped / 100.0);
    double fraction = clipping.noisyUnclippedFraction(unclipped, M, NO_NOISE, M);

    assertThat(fraction).isEqualTo(unclipped / 100.0);
    assertThat(clipping.nextClipNorm(2.5, fraction)).isEqualTo(2.5);
  }

  @Test
  void moreUnclippedUpdates_alwaysGiveASmallerNextClipNorm() {
    // Counting CLIPPED updates in b~ would make this increasing: the wrong direction.
    AdaptiveClipping clipping = clipping(0.5);
    double previous = Double.POSITIVE_INFINITY;
    for (int unclipped = 0; unclipped <= M; unclipped++) {
      double next =
          clipping.nextClipNorm(1.0, clipping.noisyUnclippedFraction(unclipped, M, NO_NOISE, M));
      assertThat(next).isLessThan(previous);
      previous = next;
    }
  }

  @Test
  void noisyUnclippedFraction_withoutNoise_isTheShiftedCountOverTheExpectedCohort() {
    AdaptiveClipping clipping = clipping(0.5);
    // unclipped / m + (m - contributions) / (2m) = 30/100 + 20/200 = 0.4
    assertThat(clipping.noisyUnclippedFraction(30, 80, NO_NOISE, M)).isCloseTo(0.4, within(1e-15));
    // 10 of 10 unclipped is not a fraction of 1: the denominator is m, not the data's count.
    // 10/100 + 90/200 = 0.55
    assertThat(clipping.noisyUnclippedFraction(10, 10, NO_NOISE, M)).isCloseTo(0.55, within(1e-15));
    // an empty round releases 1/2 + noise / m
    assertThat(clipping.noisyUnclippedFraction(0, 0, NO_NOISE, M)).isEqualTo(0.5);
    for (long contributions = 0; contributions <= 2 * M; contributions += 7) {
      for (long unclipped = 0; unclipped <= contributions; unclipped += 3) {
        double expected = unclipped / (double) M + (M - contributions) / (2.0 * M);
        assertThat(clipping.noisyUnclippedFraction(unclipped, contributions, NO_NOISE, M))
            .isCloseTo(expected, within(1e-12));
      }
    }
  }

  @Test
  void noisyUnclippedFraction_addsCountNoiseStdTimesTheDraw_overM() {
    AdaptiveClipping clipping = clipping(0.5);
    // sigma_b = 5, draw 1: + 5 / 100
    assertThat(clipping.noisyUnclippedFraction(50, M, 1.0, M)).isCloseTo(0.55, within(1e-15));
    assertThat(clipping.noisyUnclippedFraction(50, M, -2.0, M)).isCloseTo(0.4, within(1e-15));
  }

  @Test
  void oneClientMore_movesTheReleaseByHalfOverM_eitherWay() {
    // Sensitivity 1/2 of the shifted count under add/remove: b_i - 1/2 is +-1/2.
    AdaptiveClipping clipping = clipping(0.5);
    double base = clipping.noisyUnclippedFraction(40, 90, NO_NOISE, M);
    double addedUnclipped = clipping.noisyUnclippedFraction(41, 91, NO_NOISE, M);
    double addedClipped = clipping.noisyUnclippedFraction(40, 91, NO_NOISE, M);
    assertThat(addedUnclipped - base).isCloseTo(0.5 / M, within(1e-15));
    assertThat(addedClipped - base).isCloseTo(-0.5 / M, within(1e-15));
  }

  /**
   * Norms ~ log-normal(0, 1), whose q-quantile is exp(Phi^-1(q)); m = 100, sigma_b = m/20, eta_C =
   * 0.2, C_0 = 0.1, 500 rounds; the median of C over the last 200 rounds must be within 10% of the
   * quantile. Seed 2021 makes the test deterministic (no false failures once it passes). The
   * tolerance: seeds 1..200 gave a worst relative deviation of 4.8% (q = 0.3), 4.5% (q = 0.5) and
   * 6.4% (q = 0.9); seed 2021 gives -0.7%, -1.0% and -4.3%.
   */
  @ParameterizedTest
  @ValueSource(doubles = {0.3, 0.5, 0.9})
  void clipNormConverges_toTheTargetQuantileOfTheNorms(double targetQuantile) {
    double quantile = LogNormalDistribution.of(0, 1).inverseCumulativeProbability(targetQuantile);
    AdaptiveClipping clipping = AdaptiveClipping.of(targetQuantile, 0.2, 0.1, SIGMA_B);
    SplittableRandom random = new SplittableRandom(2021);
    double clipNorm = clipping.initialClipNorm();
    double[] lastRounds = new double[200];
    for (int round = 0; round < 500; round++) {
      long unclipped = 0;
      for (int client = 0; client < M; client++) {
        if (Math.exp(random.nextGaussian()) <= clipNorm) {
          unclipped++;
        }
      }
      double fraction = clipping.noisyUnclippedFraction(unclipped, M, random.nextGaussian(), M);
      clipNorm = clipping.nextClipNorm(clipNorm, fraction);
      if (round >= 300) {
        lastRounds[round - 300] = clipNorm;
      }
    }
    Arrays.sort(lastRounds);
    double median = (lastRounds[99] + lastRounds[100]) / 2;

    assertThat(median).isCloseTo(quantile, within(0.10 * quantile));
  }

  @Test
  void clipNorm_isClampedAtMax_afterManyRoundsOfAllClipped() {
    AdaptiveClipping clipping = clipping(0.9); // clamp [0.001, 1000]
    double clipNorm = 1.0;
    for (int round = 0; round < 10_000; round++) {
      clipNorm = clipping.nextClipNorm(clipNorm, clipping.noisyUnclippedFraction(0, M, -50, M));
      assertThat(clipNorm).isFinite().isPositive().isLessThanOrEqualTo(1000);
    }
    assertThat(clipNorm).isEqualTo(1000);
  }

  @Test
  void clipNorm_isClampedAtMin_afterManyRoundsOfNoneClipped() {
    AdaptiveClipping clipping = clipping(0.1);
    double clipNorm = 1.0;
    for (int round = 0; round < 10_000; round++) {
      clipNorm = clipping.nextClipNorm(clipNorm, clipping.noisyUnclippedFraction(M, M, 50, M));
      assertThat(clipNorm).isFinite().isGreaterThanOrEqualTo(0.001);
    }
    assertThat(clipNorm).isEqualTo(0.001);
  }

  @Test
  void extremeReleases_overflowingExp_areClampedToo() {
    AdaptiveClipping clipping = clipping(0.5);
    assertThat(clipping.nextClipNorm(1.0, -1e300)).isEqualTo(1000); // exp -> infinity
    assertThat(clipping.nextClipNorm(1.0, 1e300)).isEqualTo(0.001); // exp -> 0
    assertThat(clipping.nextClipNorm(Double.MAX_VALUE, 0.5)).isEqualTo(1000);
    assertThat(clipping.nextClipNorm(Double.MIN_VALUE, 0.5)).isEqualTo(0.001);
  }

  @Test
  void of_clampsToAThousandfoldEitherSideOfTheInitialClipNorm() {
    AdaptiveClipping clipping = AdaptiveClipping.of(0.5, 0.2, 2.0, 5);
    assertThat(clipping.minClipNorm()).isEqualTo(0.002);
    assertThat(clipping.maxClipNorm()).isEqualTo(2000);
    assertThat(AdaptiveClipping.DEFAULT_LEARNING_RATE).isEqualTo(0.2);
  }

  @Test
  void countNoiseMultiplier_isTwiceTheCountNoiseStd() {
    assertThat(clipping(0.5).countNoiseMultiplier()).isEqualTo(10);
    assertThat(AdaptiveClipping.of(0.5, 0.2, 1, 0.75).countNoiseMultiplier()).isEqualTo(1.5);
  }

  @Test
  void defaultCountNoiseStd_isExpectedClientsOverTwenty() {
    assertThat(AdaptiveClipping.defaultCountNoiseStd(100)).isEqualTo(5);
    assertThat(AdaptiveClipping.defaultCountNoiseStd(1)).isEqualTo(0.05);
    assertThatThrownBy(() -> AdaptiveClipping.defaultCountNoiseStd(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expectedClients must be >= 1, was 0");
  }

  @Test
  void jointNoiseMultiplier_combinesSumAndCount_andSumNoiseMultiplierForInvertsIt() {
    AdaptiveClipping clipping = clipping(0.5); // count noise multiplier 10
    // (1^-2 + 10^-2)^(-1/2) = 1 / sqrt(1.01)
    assertThat(clipping.jointNoiseMultiplier(1.0)).isCloseTo(1 / Math.sqrt(1.01), within(1e-15));
    // (1^-2 - 10^-2)^(-1/2) = 1 / sqrt(0.99)
    assertThat(clipping.sumNoiseMultiplierFor(1.0)).isCloseTo(1 / Math.sqrt(0.99), within(1e-15));
    assertThat(clipping.jointNoiseMultiplier(clipping.sumNoiseMultiplierFor(1.3)))
        .isCloseTo(1.3, within(1e-12));
    assertThatThrownBy(() -> clipping.sumNoiseMultiplierFor(10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "jointNoiseMultiplier must be < the count's noise multiplier 2 * countNoiseStd = 10.0,"
                + " was 10.0");
  }

  @Test
  void parameters_areValidated_withMessagesNamingParameterRuleAndValue() {
    assertThatThrownBy(() -> AdaptiveClipping.of(1.0, 0.2, 1, 5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("targetQuantile must be in (0, 1), was 1.0");
    assertThatThrownBy(() -> AdaptiveClipping.of(Double.NaN, 0.2, 1, 5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("targetQuantile must be in (0, 1), was NaN");
    assertThatThrownBy(() -> AdaptiveClipping.of(0.5, 0, 1, 5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("learningRate must be > 0 and finite, was 0.0");
    assertThatThrownBy(() -> AdaptiveClipping.of(0.5, 0.2, Double.NaN, 5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("initialClipNorm must be > 0 and finite, was NaN");
    assertThatThrownBy(() -> AdaptiveClipping.of(0.5, 0.2, 1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("countNoiseStd must be > 0 and finite, was 0.0");
    assertThatThrownBy(() -> new AdaptiveClipping(0.5, 0.2, 1, 5, 0, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minClipNorm must be > 0 and finite, was 0.0");
    assertThatThrownBy(() -> new AdaptiveClipping(0.5, 0.2, 1, 5, 0.1, Double.POSITIVE_INFINITY))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxClipNorm must be > 0 and finite, was Infinity");
    assertThatThrownBy(() -> new AdaptiveClipping(0.5, 0.2, 1, 5, 2, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minClipNorm must be <= initialClipNorm (1.0), was 2.0");
    assertThatThrownBy(() -> new AdaptiveClipping(0.5, 0.2, 1, 5, 0.1, 0.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxClipNorm must be >= initialClipNorm (1.0), was 0.5");
    assertThat(new AdaptiveClipping(0.5, 0.2, 1, 5, 1, 1).nextClipNorm(1, 0)).isEqualTo(1);
  }

  @Test
  void releaseAndUpdateArguments_areValidated() {
    AdaptiveClipping clipping = clipping(0.5);
    assertThatThrownBy(() -> clipping.noisyUnclippedFraction(11, 10, 0, M))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unclipped must be in [0, contributions = 10], was 11");
    assertThatThrownBy(() -> clipping.noisyUnclippedFraction(-1, 10, 0, M))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unclipped must be in [0, contributions = 10], was -1");
    assertThatThrownBy(() -> clipping.noisyUnclippedFraction(1, 10, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expectedClients must be >= 1, was 0");
    assertThatThrownBy(() -> clipping.noisyUnclippedFraction(1, 10, Double.NaN, M))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("standardNormal must be finite, was NaN");
    assertThatThrownBy(() -> clipping.nextClipNorm(0, 0.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("clipNorm must be > 0 and finite, was 0.0");
    assertThatThrownBy(() -> clipping.nextClipNorm(1, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("noisyUnclippedFraction must be finite, was NaN");
  }
}
