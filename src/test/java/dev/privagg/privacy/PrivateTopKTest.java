package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * Statistical checks with fixed seeds; each bound is 5 standard errors, a false-failure rate of
 * about 6e-7 per check.
 */
class PrivateTopKTest {
  private static final int TRIALS = 20_000;

  @Test
  void releasesExactlyKCoordinates_eachWithinTheBound() {
    PrivateTopK topK = new PrivateTopK(3, 0.5, 2.0, 0.5);
    float[][] update = {{4f, -9f, 0.1f}, {0f, 2f, -0.3f, 7f}};
    topK.applyInPlace(update, NoiseSource.seeded(1).forRound("t", 1));
    int nonZero = 0;
    for (float[] t : update) {
      for (float v : t) {
        assertThat(Math.abs(v)).isLessThanOrEqualTo(0.5f);
        nonZero += v != 0 ? 1 : 0;
      }
    }
    assertThat(nonZero).isEqualTo(3);
  }

  /**
   * k = 1 of utilities (b, 0) is one exponential mechanism of sensitivity b at selectionShare
   * epsilon: the first is chosen with probability 1 / (1 + exp(-epsilon' / 2)).
   */
  @Test
  void selection_isTheExponentialMechanism() {
    double epsilon = 3.0;
    PrivateTopK topK = new PrivateTopK(1, 1.0, epsilon, 0.5);
    NoiseStream noise = NoiseSource.seeded(2).forRound("t", 1);
    int first = 0;
    for (int t = 0; t < TRIALS; t++) {
      float[][] update = {{1f, 0f}};
      topK.applyInPlace(update, noise);
      first += update[0][0] != 0 ? 1 : 0;
    }
    double p = 1 / (1 + Math.exp(-0.5 * epsilon / 2));
    double se = Math.sqrt(p * (1 - p) / TRIALS);
    assertThat(first / (double) TRIALS).isCloseTo(p, within(5 * se));
  }

  /** A selected value's noise is Laplace of scale 2 b k / ((1 - share) epsilon): E|L| = scale. */
  @Test
  void values_carryLaplaceNoiseOfTheStatedScale() {
    // Each value at epsilon 20: scale 0.1, within the sampler's reach.
    PrivateTopK topK = new PrivateTopK(1, 1.0, 40.0, 0.5);
    assertThat(topK.valueNoiseScale()).isEqualTo(2 * 1.0 * 1 / (0.5 * 40.0));
    NoiseStream noise = NoiseSource.seeded(3).forRound("t", 1);
    double sum = 0;
    for (int t = 0; t < TRIALS; t++) {
      float[][] update = {{0f}};
      topK.applyInPlace(update, noise);
      sum += Math.abs(update[0][0]);
    }
    double scale = topK.valueNoiseScale();
    // |L| is exponential with mean and std equal to the scale; the clip at 10 scales moves the
    // mean by 5e-6 of it, float32 output by ~1e-8.
    assertThat(sum / TRIALS).isCloseTo(scale, within(5 * scale / Math.sqrt(TRIALS) + 1e-6));
  }

  /** At epsilon 200 for one value the noise would have to reach 200 scales: refused. */
  @Test
  void refusesAnEpsilonTheSamplerCannotCarry() {
    PrivateTopK topK = new PrivateTopK(1, 1.0, 200.0, 0.5);
    assertThat(topK.samplerDelta(10)).isGreaterThan(PrivateTopK.MAX_SAMPLER_DELTA);
    assertThatThrownBy(
            () ->
                topK.applyInPlace(
                    new float[][] {new float[10]}, NoiseSource.zero().forRound("t", 1)))
        .hasMessageContaining("privateTopK.epsilon must be smaller for the noise sampler");
    assertThat(new PrivateTopK(2, 1.0, 10.0, 0.5).samplerDelta(1000)).isLessThan(1e-20);
  }

  @Test
  void refusesBadParameters_andKAboveTheDimension_namingThem() {
    assertThatThrownBy(() -> new PrivateTopK(0, 1, 1, 0.5)).hasMessageContaining("privateTopK.k");
    assertThatThrownBy(() -> new PrivateTopK(1, -1, 1, 0.5)).hasMessageContaining("bound");
    assertThatThrownBy(() -> new PrivateTopK(1, 1, Double.NaN, 0.5))
        .hasMessageContaining("epsilon");
    assertThatThrownBy(() -> new PrivateTopK(1, 1, 1, 1.0)).hasMessageContaining("selectionShare");
    PrivateTopK topK = new PrivateTopK(5, 1, 1, 0.5);
    assertThatThrownBy(
            () -> topK.applyInPlace(new float[][] {{1f, 2f}}, NoiseSource.zero().forRound("t", 1)))
        .hasMessageContaining("privateTopK.k must be in [1, 2]");
    assertThatThrownBy(
            () ->
                new PrivateTopK(1, 1, 1, 0.5)
                    .applyInPlace(new float[][] {{Float.NaN}}, NoiseSource.zero().forRound("t", 1)))
        .isInstanceOf(NonFiniteUpdateException.class);
  }
}
