package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class RootsTest {
  @Test
  void findsASimpleRoot_toTheTolerance() {
    assertThat(Roots.brent(x -> x * x - 2, 0, 2, 1e-14)).isCloseTo(Math.sqrt(2), within(1e-14));
    assertThat(Roots.brent(Math::cos, 0, 3, 1e-12)).isCloseTo(Math.PI / 2, within(1e-12));
  }

  // The estimators' log-deltas are -infinity past the largest privacy loss; Brent must still close
  // in (by bisection there), as scipy's brentq does.
  @Test
  void toleratesInfiniteValues() {
    double root =
        Roots.brent(x -> x < 3 ? Math.log(3 - x) : Double.NEGATIVE_INFINITY, 0, 10, 1e-12);
    assertThat(root).isCloseTo(2, within(1e-12));
  }

  @Test
  void aZeroAtAnEnd_isReturned() {
    assertThat(Roots.brent(x -> x - 1, 1, 5, 1e-9)).isEqualTo(1);
  }

  @Test
  void refusesABracketWithoutSignChange() {
    assertThatThrownBy(() -> Roots.brent(x -> x * x + 1, -1, 1, 1e-9))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("f must change sign over [-1.0, 1.0], was f(lo)=2.0, f(hi)=2.0");
  }
}
