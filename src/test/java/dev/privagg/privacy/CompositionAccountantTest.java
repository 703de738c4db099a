package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import org.junit.jupiter.api.Test;

class CompositionAccountantTest {
  private final Accountant basic = new BasicCompositionAccountant();
  private final Accountant advanced = new AdvancedCompositionAccountant();
  private final Accountant rdp = RdpAccountant.withDefaultOrders();

  @Test
  void basic_isRoundsTimesThePerRoundGaussianEpsilon() {
    // Unsampled rounds: each is the tight Gaussian epsilon at delta / T (Balle and Wang 2018).
    PrivacyLedger ledger = PrivacyLedger.of(PrivacyEvent.gaussian(5.0, 10));
    double perRound = GaussianCalibration.gaussianEpsilon(5.0, 1e-5 / 10);
    assertThat(basic.epsilon(ledger, 1e-5).epsilon())
        .isCloseTo(10 * perRound, withinPercentage(1e-9));
  }

  @Test
  void advanced_matchesDworkRothblumVadhan() {
    // DRV 2010 Thm III.3: eps' = sqrt(2 T ln(1/delta')) e + T e (e^e - 1), delta' = delta / 2,
    // per-round delta = delta / (2T).
    int rounds = 1000;
    PrivacyLedger ledger = PrivacyLedger.of(PrivacyEvent.gaussian(50.0, rounds));
    double e = GaussianCalibration.gaussianEpsilon(50.0, 1e-5 / (2 * rounds));
    double expected = Math.sqrt(2 * rounds * Math.log(1 / 0.5e-5)) * e + rounds * e * Math.expm1(e);
    assertThat(advanced.epsilon(ledger, 1e-5).epsilon())
        .isCloseTo(expected, withinPercentage(1e-9));
  }

  @Test
  void sampling_amplifiesPerRoundEpsilon() {
    PrivacyLedger sampled = PrivacyLedger.of(PrivacyEvent.sampledGaussian(2.0, 0.01, 100));
    PrivacyLedger full = PrivacyLedger.of(PrivacyEvent.gaussian(2.0, 100));
    assertThat(basic.epsilon(sampled, 1e-5).epsilon())
        .isLessThan(basic.epsilon(full, 1e-5).epsilon());
  }

  @Test
  void bothAreLooserThanRdp_forManySampledRounds() {
    PrivacyLedger ledger = PrivacyLedger.of(PrivacyEvent.sampledGaussian(1.1, 0.05, 500));
    double tight = rdp.epsilon(ledger, 1e-5).epsilon();
    assertThat(advanced.epsilon(ledger, 1e-5).epsilon()).isGreaterThan(tight);
    assertThat(basic.epsilon(ledger, 1e-5).epsilon()).isGreaterThan(tight);
  }

  @Test
  void delta_roundTripsToTheSafeSide() {
    PrivacyLedger ledger = PrivacyLedger.of(PrivacyEvent.gaussian(20.0, 50));
    double eps = advanced.epsilon(ledger, 1e-6).epsilon();
    double delta = advanced.delta(ledger, eps);
    assertThat(delta).isCloseTo(1e-6, withinPercentage(0.1));
    assertThat(advanced.epsilon(ledger, delta).epsilon()).isLessThanOrEqualTo(eps);
  }

  @Test
  void compositionIsOrderIndependent_soLedgersComposeByCount() {
    // Both bounds depend only on the multiset of rounds (per-round delta is delta / T or
    // delta / (2T)); the same rounds in another order give the same epsilon, relative 1e-12.
    PrivacyEvent sampled = PrivacyEvent.sampledGaussian(2.0, 0.05, 1);
    PrivacyEvent full = PrivacyEvent.gaussian(20.0, 1);
    PrivacyLedger sampledFirst = PrivacyLedger.EMPTY;
    PrivacyLedger fullFirst = PrivacyLedger.EMPTY;
    for (int r = 0; r < 300; r++) {
      sampledFirst = sampledFirst.append(r < 200 ? sampled : full);
      fullFirst = fullFirst.append(r < 100 ? full : sampled);
    }
    assertThat(sampledFirst.events()).containsExactly(sampled.times(200), full.times(100));
    assertThat(fullFirst.events()).containsExactly(full.times(100), sampled.times(200));
    for (Accountant accountant : new Accountant[] {basic, advanced}) {
      assertThat(accountant.epsilon(sampledFirst, 1e-5).epsilon())
          .as(accountant.name())
          .isCloseTo(accountant.epsilon(fullFirst, 1e-5).epsilon(), withinPercentage(1e-10));
    }
  }

  @Test
  void zeroNoise_isInfiniteEpsilon() {
    PrivacyLedger ledger = PrivacyLedger.of(PrivacyEvent.gaussian(0.0, 3));
    assertThat(basic.epsilon(ledger, 1e-5).epsilon()).isInfinite();
    assertThat(advanced.epsilon(ledger, 1e-5).epsilon()).isInfinite();
  }
}
