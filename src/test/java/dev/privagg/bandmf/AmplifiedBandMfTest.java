package dev.privagg.bandmf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.withinPercentage;

import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import org.junit.jupiter.api.Test;

class AmplifiedBandMfTest {

  // jax_privacy accounting.amplified_bandmf_event is dpsgd_event(z, q, ceil(iterations / bands));
  // the reference epsilons are dp_accounting 0.6.0's PLD for those DP-SGD events (the table of
  // PldAccountantTest): q 0.2, z 2, 100 compositions at delta 1e-7 gives 6.25302226333253, and
  // q 0.2, z 5, 1000 compositions at delta 1e-5 gives 5.871608708420298.
  @Test
  void run_isCeilRoundsOverBandsSampledGaussians_matchingDpAccounting() {
    Accountant pld = Accountant.named("pld");
    for (long n = 991; n <= 1000; n++) {
      AmplifiedBandMf run = new AmplifiedBandMf(2.0, 0.2, n, 10);
      assertThat(run.participations()).isEqualTo(100);
      assertThat(pld.epsilon(PrivacyLedger.of(run.event()), 1e-7).epsilon())
          .isCloseTo(6.25302226333253, withinPercentage(5e-5));
    }
    AmplifiedBandMf longRun = new AmplifiedBandMf(5.0, 0.2, 16_000, 16);
    assertThat(pld.epsilon(PrivacyLedger.of(longRun.event()), 1e-5).epsilon())
        .isCloseTo(5.871608708420298, withinPercentage(5e-5));
  }

  @Test
  void oneBand_isDpFedAvg() {
    AmplifiedBandMf run = new AmplifiedBandMf(1.1, 0.01, 300, 1);
    assertThat(run.event()).isEqualTo(PrivacyEvent.sampledGaussian(1.1, 0.01, 300));
    for (long t = 1; t <= 300; t++) {
      assertThat(run.charges(t)).isTrue();
      assertThat(run.groupOf(t)).isZero();
    }
  }

  @Test
  void roundCharges_composeToTheRun_afterEveryRound() {
    AmplifiedBandMf run = new AmplifiedBandMf(1.3, 0.05, 23, 4);
    long charged = 0;
    for (long t = 1; t <= 23; t++) {
      if (run.charges(t)) {
        charged++;
      }
      // After t rounds no group has had more than ceil(t / b) rounds: group 0 has exactly that.
      long group0Rounds = 0;
      for (long s = 1; s <= t; s++) {
        if (run.groupOf(s) == 0) {
          group0Rounds++;
        }
      }
      assertThat(charged).as("round %d", t).isEqualTo(run.participationsThrough(t));
      assertThat(group0Rounds).isEqualTo(charged);
    }
    assertThat(charged).isEqualTo(run.participations()).isEqualTo(6);
    assertThat(run.charges(24)).isFalse();
    assertThat(run.charges(0)).isFalse();
  }

  @Test
  void noOpRounds_countAsRounds_composeAsNothing_inEveryAccountant() {
    AmplifiedBandMf run = new AmplifiedBandMf(1.3, 0.05, 23, 4);
    PrivacyLedger ledger = PrivacyLedger.EMPTY;
    for (long t = 1; t <= 23; t++) {
      ledger = ledger.append(run.charges(t) ? run.roundEvent() : PrivacyEvent.noOp(1));
    }
    assertThat(ledger.totalCount()).isEqualTo(23);
    for (String name : Accountant.NAMES) {
      Accountant accountant = Accountant.named(name);
      assertThat(accountant.epsilon(ledger, 1e-5).epsilon())
          .as(name)
          .isEqualTo(accountant.epsilon(PrivacyLedger.of(run.event()), 1e-5).epsilon());
      assertThat(accountant.delta(ledger, 1.0))
          .as(name)
          .isEqualTo(accountant.delta(PrivacyLedger.of(run.event()), 1.0));
    }
    assertThat(
            Accountant.named("pld").epsilon(PrivacyLedger.of(PrivacyEvent.noOp(5)), 1e-5).epsilon())
        .isZero();
    assertThatThrownBy(() -> new PrivacyEvent(dev.privagg.privacy.MechanismKind.NO_OP, 1.0, 1.0, 1))
        .hasMessageContaining("NO_OP event has no noise multiplier");
  }

  @Test
  void groups_cycle_andAreBandsApart() {
    AmplifiedBandMf run = new AmplifiedBandMf(1, 0.5, 100, 7);
    for (long t = 1; t <= 100; t++) {
      assertThat(run.groupOf(t)).isEqualTo((int) ((t - 1) % 7));
      if (t > 7) {
        assertThat(run.groupOf(t)).isEqualTo(run.groupOf(t - 7));
      }
    }
  }

  @Test
  void badParameters_refused() {
    assertThatThrownBy(() -> new AmplifiedBandMf(1, 0, 10, 2))
        .hasMessageContaining("samplingRate must be in (0, 1]");
    assertThatThrownBy(() -> new AmplifiedBandMf(1, 0.5, 0, 2))
        .hasMessageContaining("rounds must be >= 1");
    assertThatThrownBy(() -> new AmplifiedBandMf(1, 0.5, 10, 0))
        .hasMessageContaining("bands must be >= 1");
    assertThatThrownBy(() -> new AmplifiedBandMf(Double.NaN, 0.5, 10, 2))
        .hasMessageContaining("noiseMultiplier");
  }
}
