package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
