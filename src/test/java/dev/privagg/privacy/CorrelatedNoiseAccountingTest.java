package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class CorrelatedNoiseAccountingTest {
  private static final double DELTA = 1e-5;

  @Test
  void roundCharges_composeToThePrefixGaussian_atEveryRound() {
    double z = 2.0;
    double[] s = {0, 1.0, 1.3, 1.5, 1.62, 1.7};
    double planned = s[s.length - 1];
    PrivacyLedger ledger = PrivacyLedger.EMPTY;
    Accountant rdp = Accountant.named("rdp");
    for (int t = 1; t < s.length; t++) {
      ledger = ledger.append(CorrelatedNoiseAccounting.roundCharge(z, planned, s[t - 1], s[t]));
      double prefix = CorrelatedNoiseAccounting.prefixNoiseMultiplier(z, planned, s[t]);
      assertThat(ledger.events()).hasSize(1);
      assertThat(ledger.totalCount()).isEqualTo(t);
      assertThat(ledger.events().get(0).noiseMultiplier() / Math.sqrt(t))
          .isCloseTo(prefix, within(1e-12 * prefix));
      assertThat(rdp.epsilon(ledger, DELTA).epsilon())
          .isCloseTo(CorrelatedNoiseAccounting.epsilon(rdp, prefix, DELTA), within(1e-9));
    }
    // The whole run spends exactly the planned Gaussian's epsilon: z at t = n.
    assertThat(CorrelatedNoiseAccounting.prefixNoiseMultiplier(z, planned, planned)).isEqualTo(z);
  }

  @Test
  void epsilonGrowsWithTheRounds_andNeverPassesThePlannedOne() {
    Accountant pld = Accountant.named("pld");
    double planned = CorrelatedNoiseAccounting.epsilon(pld, 1.5, DELTA);
    double previous = 0;
    for (double s : new double[] {0.5, 1.0, 1.4, 2.0}) {
      double eps =
          CorrelatedNoiseAccounting.epsilon(
              pld, CorrelatedNoiseAccounting.prefixNoiseMultiplier(1.5, 2.0, s), DELTA);
      assertThat(eps).isGreaterThan(previous).isLessThanOrEqualTo(planned);
      previous = eps;
    }
  }

  @Test
  void noiseMultiplierFor_aTarget_isTheAnalyticGaussiansOne_byPld() {
    // Balle and Wang 2018, Thm. 8 gives the exact multiplier of one Gaussian; PLD approaches it
    // from above in epsilon, so its multiplier is at most a hair larger.
    for (double eps : new double[] {0.5, 2.0, 8.0}) {
      double exact = GaussianCalibration.analyticSigma(eps, DELTA, 1.0);
      double z = CorrelatedNoiseAccounting.noiseMultiplierFor(Accountant.named("pld"), eps, DELTA);
      assertThat(z).isBetween(exact * (1 - 1e-8), exact * (1 + 1e-5));
      assertThat(CorrelatedNoiseAccounting.epsilon(Accountant.named("pld"), z, DELTA))
          .isLessThanOrEqualTo(eps);
    }
  }

  @Test
  void aSensitivityThatShrinks_isRefused_andOneThatStaysIsStillCharged() {
    assertThatThrownBy(() -> CorrelatedNoiseAccounting.roundCharge(1.0, 2.0, 1.5, 1.4))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot shrink");
    double z = CorrelatedNoiseAccounting.roundCharge(1.0, 2.0, 1.5, 1.5).noiseMultiplier();
    assertThat(z).isEqualTo(2.0 / (1e-12 * 1.5));
  }
}
