package dev.privagg.secagg;

import static dev.privagg.secagg.ThreatModel.AdversaryClass.CURIOUS_SERVER;
import static dev.privagg.secagg.ThreatModel.AdversaryClass.NONE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ThreatModelTest {
  @ParameterizedTest
  @ValueSource(doubles = {-0.1, 1.0, Double.NaN, Double.POSITIVE_INFINITY})
  void constructor_rejectsAdversarialRatesOutsideTheHalfOpenUnitInterval(double rate) {
    assertThatThrownBy(() -> new ThreatModel(rate, 0.1, CURIOUS_SERVER))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("adversarialClientRate must be in [0, 1), was " + rate);
  }

  @ParameterizedTest
  @ValueSource(doubles = {-1.0, 1.0, Double.NaN})
  void constructor_rejectsDropoutRatesOutsideTheHalfOpenUnitInterval(double rate) {
    assertThatThrownBy(() -> new ThreatModel(0.1, rate, CURIOUS_SERVER))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("estimatedDropoutRate must be in [0, 1), was " + rate);
  }

  @Test
  void constructor_rejectsAdversariesWithoutAnAdversary() {
    assertThatThrownBy(() -> new ThreatModel(0.5, 0.5, NONE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("adversaryClass NONE requires adversarialClientRate = 0, was 0.5");
  }

  @Test
  void constructor_rejectsAMissingAdversaryClass() {
    assertThatThrownBy(() -> new ThreatModel(0.1, 0.1, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("adversaryClass");
  }

  @Test
  void constructor_acceptsTheClosedLowerBounds() {
    assertThat(new ThreatModel(0, 0, NONE).adversaryClass()).isEqualTo(NONE);
  }
}
