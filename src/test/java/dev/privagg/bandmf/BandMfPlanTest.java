package dev.privagg.bandmf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.withinPercentage;

import dev.privagg.correlated.ErrorKind;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.NoisePlanner;
import org.junit.jupiter.api.Test;

class BandMfPlanTest {
  private static final Accountant RDP = Accountant.named("rdp");

  // jax_privacy tests/matrix_factorization/toeplitz_test.py test_large_epsilon: N 1000, m 100,
  // n 100, epsilon 20, delta 1e-6: correlation beats amplification, the most bands (10) win.
  @Test
  void largeEpsilon_mostBandsWin() {
    BandMfPlan.Result plan = BandMfPlan.plan(1000, 100, 100, 20.0, 1e-6, RDP, ErrorKind.MEAN, null);
    assertThat(plan.best().bands()).isEqualTo(10);
    assertThat(plan.best().samplingRate()).isEqualTo(1.0);
  }

  // test_small_epsilon: the same at epsilon 0.1: amplification wins, one band (DP-FedAvg).
  @Test
  void smallEpsilon_oneBandWins() {
    BandMfPlan.Result plan = BandMfPlan.plan(1000, 100, 100, 0.1, 1e-6, RDP, ErrorKind.MEAN, null);
    assertThat(plan.best().bands()).isEqualTo(1);
    assertThat(plan.best().samplingRate()).isEqualTo(0.1);
  }

  // test_helper_stddev_at_max_bands: N 100, m 10, n 100, epsilon 2, delta 1e-6, 10 bands: q = 1,
  // no amplification; the noise equals the b-min-sep mechanism's, one Gaussian at z / sqrt(k).
  @Test
  void maxBands_noAmplification_isTheMinSepGaussian() {
    BandMfPlan.Result plan = BandMfPlan.plan(100, 10, 100, 2.0, 1e-6, RDP, ErrorKind.MEAN, 10);
    BandMfPlan.Candidate c = plan.best();
    assertThat(c.samplingRate()).isEqualTo(1.0);
    assertThat(c.participations()).isEqualTo(10);
    double single = new NoisePlanner(RDP).plan(2.0, 1e-6, 1, 1.0).noiseMultiplier();
    assertThat(c.noiseMultiplier()).isCloseTo(single * Math.sqrt(10), withinPercentage(1e-2));
  }

  @Test
  void best_isNeverWorseThanOneBand() {
    for (double epsilon : new double[] {0.5, 2, 8}) {
      BandMfPlan.Result plan =
          BandMfPlan.plan(6000, 200, 300, epsilon, 1e-6, RDP, ErrorKind.MEAN, null);
      BandMfPlan.Candidate dpFedAvg = plan.candidates().get(0);
      assertThat(dpFedAvg.bands()).isEqualTo(1);
      assertThat(plan.best().averageError()).isLessThanOrEqualTo(dpFedAvg.averageError());
      assertThat(plan.candidates()).allSatisfy(c -> assertThat(c.bands()).isBetween(1, 30));
    }
  }

  @Test
  void pld_calibratesTheFinalists_belowRdp() {
    BandMfPlan.Result rdp = BandMfPlan.plan(6000, 200, 100, 4, 1e-5, RDP, ErrorKind.MEAN, null);
    BandMfPlan.Result pld =
        BandMfPlan.plan(6000, 200, 100, 4, 1e-5, Accountant.named("pld"), ErrorKind.MEAN, null);
    assertThat(pld.screenedBy()).isEqualTo("rdp");
    assertThat(pld.candidates()).isEqualTo(rdp.candidates());
    BandMfPlan.Candidate best = pld.best();
    // PLD is tighter than RDP: less noise for the same target, at the finalist it picked.
    BandMfPlan.Candidate sameBandsByRdp =
        rdp.candidates().stream().filter(c -> c.bands() == best.bands()).findFirst().orElseThrow();
    assertThat(best.noiseMultiplier()).isLessThan(sameBandsByRdp.noiseMultiplier());
    double epsilon =
        Accountant.named("pld")
            .epsilon(
                dev.privagg.privacy.PrivacyLedger.of(
                    new AmplifiedBandMf(
                            best.noiseMultiplier(), best.samplingRate(), 100, best.bands())
                        .event()),
                1e-5)
            .epsilon();
    assertThat(epsilon).isLessThanOrEqualTo(4.0).isGreaterThan(4.0 * (1 - 1e-4));
  }

  @Test
  void candidates_growByAQuarter_endAtTheMost() {
    assertThat(BandMfPlan.candidateBands(1)).containsExactly(1);
    assertThat(BandMfPlan.candidateBands(10)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 10);
    assertThat(BandMfPlan.candidateBands(30)).contains(1, 8, 10, 12, 15, 18, 22, 27, 30);
  }

  @Test
  void impossibleBands_refusedWithTheLimit() {
    assertThatThrownBy(() -> BandMfPlan.plan(1000, 100, 100, 2, 1e-6, RDP, ErrorKind.MEAN, 11))
        .hasMessageContaining("bands must be in [1, 10]");
    assertThatThrownBy(() -> BandMfPlan.plan(10, 100, 100, 2, 1e-6, RDP, ErrorKind.MEAN, null))
        .hasMessageContaining("cohort must be between 1 and the population 10");
  }
}
