package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PrivacyLedgerTest {
  private final PrivacyEvent sampled = PrivacyEvent.sampledGaussian(1.1, 0.01, 1);
  private final PrivacyEvent earlyClose = PrivacyEvent.gaussian(0.55, 1);

  @Test
  void appendingTheSameMechanism_addsToItsCount_soTheLedgerStaysOneEvent() {
    PrivacyLedger ledger = PrivacyLedger.EMPTY;
    for (int round = 0; round < 10_000; round++) {
      ledger = ledger.append(sampled);
    }
    assertThat(ledger.events()).containsExactly(sampled.times(10_000));
    assertThat(ledger.totalCount()).isEqualTo(10_000);
  }

  @Test
  void differentMechanisms_stayApart_inTheOrderTheyFirstAppeared() {
    PrivacyLedger ledger =
        PrivacyLedger.EMPTY
            .append(sampled)
            .append(earlyClose)
            .append(sampled.times(3))
            .append(earlyClose)
            .append(PrivacyEvent.sampledGaussian(1.1, 0.02, 1));
    assertThat(ledger.events())
        .containsExactly(
            sampled.times(4), earlyClose.times(2), PrivacyEvent.sampledGaussian(1.1, 0.02, 1));
    assertThat(ledger.totalCount()).isEqualTo(7);
  }

  @Test
  void unsampledGaussiansAtDifferentNoise_mergeIntoOneGaussianWithTheSumOfTheirPrecisions() {
    PrivacyLedger ledger =
        PrivacyLedger.EMPTY
            .append(sampled)
            .append(PrivacyEvent.gaussian(1.0, 1))
            .append(PrivacyEvent.gaussian(2.0, 3));
    // 4 / z^2 = 1 / 1 + 3 / 4
    assertThat(ledger.events()).hasSize(2);
    assertThat(ledger.events().get(0)).isEqualTo(sampled);
    PrivacyEvent merged = ledger.events().get(1);
    assertThat(merged.kind()).isEqualTo(MechanismKind.GAUSSIAN);
    assertThat(merged.count()).isEqualTo(4);
    assertThat(merged.noiseMultiplier()).isCloseTo(Math.sqrt(4 / 1.75), within(1e-15));
  }

  @Test
  void mergedGaussians_spendWhatTheOneGaussianTheyComposeToSpends_byEveryExactAccountant() {
    PrivacyLedger merged =
        PrivacyLedger.of(PrivacyEvent.gaussian(3.0, 1), PrivacyEvent.gaussian(5.0, 2));
    double z = 1 / Math.sqrt(1 / 9.0 + 2 / 25.0);
    double exact = GaussianCalibration.gaussianEpsilon(z, 1e-5);
    // Balle and Wang 2018, Thm. 8 is exact; PLD is an upper bound within 1e-6 relative here.
    assertThat(PldAccountant.withDefaultInterval().epsilon(merged, 1e-5).epsilon())
        .isBetween(exact, exact * (1 + 1e-6));
    assertThat(RdpAccountant.withDefaultOrders().epsilon(merged, 1e-5).epsilon())
        .isEqualTo(
            RdpAccountant.withDefaultOrders()
                .epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(z, 1)), 1e-5)
                .epsilon(),
            within(1e-9));
  }

  @Test
  void aGaussianWithoutNoise_keepsTheMergedLedgerAtZeroNoise() {
    PrivacyLedger ledger =
        PrivacyLedger.of(PrivacyEvent.gaussian(2.0, 1), PrivacyEvent.gaussian(0.0, 1));
    assertThat(ledger.events()).containsExactly(PrivacyEvent.gaussian(0.0, 2));
  }

  @Test
  void kindIsPartOfTheMechanism_evenAtTheSameRateAndNoise() {
    PrivacyEvent explicitSampled =
        new PrivacyEvent(MechanismKind.POISSON_SAMPLED_GAUSSIAN, 0.55, 1.0, 1);
    assertThat(PrivacyLedger.of(earlyClose, explicitSampled).events()).hasSize(2);
  }

  @Test
  void constructingFromOneEventPerRound_composesByCount() {
    List<PrivacyEvent> perRound = new ArrayList<>();
    for (int round = 0; round < 500; round++) {
      perRound.add(round % 5 == 0 ? earlyClose : sampled);
    }
    PrivacyLedger ledger = new PrivacyLedger(perRound);
    assertThat(ledger.events()).containsExactly(earlyClose.times(100), sampled.times(400));
  }

  @Test
  void ledgerIsImmutable_andRefusesNullEvents() {
    List<PrivacyEvent> events = new ArrayList<>(List.of(sampled));
    PrivacyLedger ledger = new PrivacyLedger(events);
    events.add(earlyClose);
    assertThat(ledger.events()).containsExactly(sampled);
    assertThatThrownBy(() -> ledger.events().add(sampled))
        .isInstanceOf(UnsupportedOperationException.class);
    List<PrivacyEvent> withNull = new ArrayList<>();
    withNull.add(null);
    assertThatThrownBy(() -> new PrivacyLedger(withNull))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("events must not contain null");
  }

  @Test
  void countBeyondLongRange_isRefused() {
    PrivacyLedger full = PrivacyLedger.of(sampled.times(Long.MAX_VALUE));
    assertThatThrownBy(() -> full.append(sampled)).isInstanceOf(ArithmeticException.class);
  }
}
