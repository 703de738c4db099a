package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** What rounds that may fail to unmask add to delta. */
class SecureFailureDeltaTest {
  @Test
  void total_addsOnePlusEToTheEpsilonTimesTheRoundsFailureProbability() {
    double beta = 0x1p-39;
    // 1e-5 + (1 + e^4) * 100 * 2^-39 = 1e-5 + 1.0114e-8.
    assertThat(SecureFailureDelta.total(1e-5, 4, 100, beta))
        .isCloseTo(1e-5 + (1 + Math.exp(4)) * 100 * beta, within(1e-18))
        .isCloseTo(1.001011e-5, within(1e-11));
  }

  @Test
  void total_isTheDeltaItself_withoutRoundsOrFailures_andOneWhereItSaysNothing() {
    assertThat(SecureFailureDelta.total(1e-5, 4, 0, 0x1p-39)).isEqualTo(1e-5);
    assertThat(SecureFailureDelta.total(1e-5, 4, 100, 0)).isEqualTo(1e-5);
    assertThat(SecureFailureDelta.total(1e-5, Double.POSITIVE_INFINITY, 1, 0x1p-39)).isEqualTo(1);
    assertThat(SecureFailureDelta.total(1e-5, 800, 1, 0x1p-39)).isEqualTo(1);
  }

  @Test
  void total_refusesParametersOutOfRange_namingThem() {
    assertThatThrownBy(() -> SecureFailureDelta.total(Double.NaN, 1, 1, 0))
        .hasMessage("delta must be in [0, 1], was NaN");
    assertThatThrownBy(() -> SecureFailureDelta.total(1e-5, -1, 1, 0))
        .hasMessage("epsilon must be >= 0, was -1.0");
    assertThatThrownBy(() -> SecureFailureDelta.total(1e-5, 1, -1, 0))
        .hasMessage("rounds must be >= 0, was -1");
    assertThatThrownBy(() -> SecureFailureDelta.total(1e-5, 1, 1, 2))
        .hasMessage("beta must be in [0, 1], was 2.0");
  }
}
