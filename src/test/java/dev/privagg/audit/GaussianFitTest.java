package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class GaussianFitTest {
  @Test
  void meanAndSampleStd_withDivisorNMinusOne() {
    GaussianFit fit = GaussianFit.of(new double[] {1, 2, 3, 4});
    assertThat(fit.mean()).isEqualTo(2.5);
    assertThat(fit.std()).isCloseTo(Math.sqrt(5.0 / 3), within(1e-15));
  }

  @Test
  void aLargeCommonOffset_doesNotCostPrecision() {
    GaussianFit fit = GaussianFit.of(new double[] {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4});
    assertThat(fit.std()).isCloseTo(Math.sqrt(5.0 / 3), within(1e-9));
  }

  @Test
  void refusesTooFewOrNonFiniteSamples() {
    assertThatThrownBy(() -> GaussianFit.of(new double[] {1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("samples must hold at least 2 values to estimate a std, had 1");
    assertThatThrownBy(() -> GaussianFit.of(new double[] {1, Double.POSITIVE_INFINITY}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("samples must be finite, samples[1] was Infinity");
    assertThatThrownBy(() -> new GaussianFit(0, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("std must be >= 0 and finite, was -1.0");
  }
}
