package dev.privagg.privacy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

import org.junit.jupiter.api.Test;

class RdpAccountantTest {
  private final RdpAccountant accountant = RdpAccountant.withDefaultOrders();

  private PrivacySpent epsilon(double z, double q, long rounds, double delta) {
    return accountant.epsilon(PrivacyLedger.of(PrivacyEvent.sampledGaussian(z, q, rounds)), delta);
  }

  @Test
  void matchesTensorFlowPrivacy_mnist60000_batch150_15epochs() {
    // TF Privacy compute_dp_sgd_privacy_test: N=60000, batch 150, noise 1.3, 15 epochs, delta 1e-5
    // -> epsilon 0.72422340261 at order 19. Relative tolerance 1e-9.
    PrivacySpent spent = epsilon(1.3, 150.0 / 60000, 6000, 1e-5);
    assertThat(spent.epsilon()).isCloseTo(0.72422340261, withinPercentage(1e-7));
    assertThat(spent.order()).isEqualTo(19.0);
  }

  @Test
  void matchesTensorFlowPrivacy_100000examples_batch100_30epochs() {
    // TF Privacy compute_dp_sgd_privacy_test: N=100000, batch 100, noise 1.0, 30 epochs,
    // delta 1e-7 -> epsilon 1.41549884954 at order 13. Relative tolerance 1e-9.
    PrivacySpent spent = epsilon(1.0, 100.0 / 100000, 30000, 1e-7);
    assertThat(spent.epsilon()).isCloseTo(1.41549884954, withinPercentage(1e-7));
    assertThat(spent.order()).isEqualTo(13.0);
  }

  @Test
  void matchesOpacusAccountantTest() {
    // Opacus tests/accountants_test.py: noise 1.5, q 0.04, 2250 steps, delta 1e-5 -> ~7.329.
    // The test there asserts three decimals, so relative tolerance 1e-4.
    assertThat(epsilon(1.5, 0.04, 2250, 1e-5).epsilon()).isCloseTo(7.329, withinPercentage(0.01));
  }

  @Test
  void isAtMostTheTffTutorialValue_whichUsedALooserFractionalBound() {
    // TFF "Differential privacy in TFF" tutorial: q = 120/3383, noise 1.2, 100 rounds, delta 1e-5
    // -> 1.986 (printed to three decimals, so the tutorial's value is < 1.9865). An exact
    // accountant is at most that, and within 1%.
    double eps = epsilon(1.2, 120.0 / 3383, 100, 1e-5).epsilon();
    assertThat(eps).isLessThan(1.9865).isCloseTo(1.986, withinPercentage(1));
  }

  @Test
  void fractionalOrders_areExact_matchingNumericalIntegration() {
    // A_alpha = E_{x ~ N(0, z^2)} [((1-q) + q exp((2x - 1) / (2 z^2)))^alpha] (Mironov et al.
    // 2019, Sec. 3), integrated by the midpoint rule over +-40 std. An upper bound substituted
    // at fractional orders would sit measurably above this; tolerance 1e-8 relative.
    double q = 0.01;
    double z = 1.1;
    for (double order : new double[] {1.5, 2.5, 4.7, 10.3}) {
      double expected = Math.log(integrateA(q, z, order)) / (order - 1);
      assertThat(SampledGaussianRdp.rdp(q, z, order))
          .as("order %s", order)
          .isCloseTo(expected, withinPercentage(1e-6));
    }
  }

  @Test
  void integerOrders_matchNumericalIntegration() {
    double q = 0.05;
    double z = 0.8;
    for (double order : new double[] {2, 3, 8, 20}) {
      double expected = Math.log(integrateA(q, z, order)) / (order - 1);
      assertThat(SampledGaussianRdp.rdp(q, z, order)).isCloseTo(expected, withinPercentage(1e-6));
    }
  }

  @Test
  void rdpIsContinuousAcrossIntegerOrders() {
    // The integer and fractional formulas must agree where they meet.
    double atThree = SampledGaussianRdp.rdp(0.02, 1.0, 3.0);
    assertThat(SampledGaussianRdp.rdp(0.02, 1.0, 3.0 - 1e-9)).isCloseTo(atThree, within(1e-9));
    assertThat(SampledGaussianRdp.rdp(0.02, 1.0, 3.0 + 1e-9)).isCloseTo(atThree, within(1e-9));
  }

  @Test
  void largeOrdersAndTinyRatesStayFinite() {
    double rdp = SampledGaussianRdp.rdp(1e-6, 0.7, 1024);
    assertThat(rdp).isFinite().isPositive();
    assertThat(SampledGaussianRdp.rdp(1e-6, 5.0, 63.5)).isFinite().isPositive();
  }

  @Test
  void edgeCases_zeroNoiseIsInfinite_fullSamplingIsPlainGaussian() {
    assertThat(SampledGaussianRdp.rdp(0.1, 0.0, 2)).isInfinite();
    assertThat(SampledGaussianRdp.rdp(1.0, 2.0, 5)).isEqualTo(5 / (2 * 4.0));
    assertThat(SampledGaussianRdp.rdp(0.0, 2.0, 5)).isZero();
    assertThat(epsilon(0.0, 0.1, 10, 1e-5).epsilon()).isInfinite();
    assertThat(accountant.epsilon(PrivacyLedger.EMPTY, 1e-5).epsilon()).isZero();
  }

  @Test
  void epsilonGrowsWithRoundsAndSamplingRate_andFallsWithNoise() {
    double base = epsilon(1.0, 0.01, 1000, 1e-5).epsilon();
    assertThat(epsilon(1.0, 0.01, 2000, 1e-5).epsilon()).isGreaterThan(base);
    assertThat(epsilon(1.0, 0.02, 1000, 1e-5).epsilon()).isGreaterThan(base);
    assertThat(epsilon(1.2, 0.01, 1000, 1e-5).epsilon()).isLessThan(base);
    double previous = 0;
    for (long rounds = 1; rounds <= 4096; rounds *= 4) {
      double eps = epsilon(0.9, 0.05, rounds, 1e-6).epsilon();
      assertThat(eps).isGreaterThan(previous);
      previous = eps;
    }
  }

  @Test
  void ledgerComposesAdditively_splitEventsEqualOneEvent() {
    PrivacyLedger split =
        PrivacyLedger.of(
            PrivacyEvent.sampledGaussian(1.1, 0.02, 300),
            PrivacyEvent.sampledGaussian(1.1, 0.02, 700));
    PrivacyLedger whole = PrivacyLedger.of(PrivacyEvent.sampledGaussian(1.1, 0.02, 1000));
    assertThat(accountant.epsilon(split, 1e-5).epsilon())
        .isCloseTo(accountant.epsilon(whole, 1e-5).epsilon(), within(1e-12));
  }

  @Test
  void ledgerOfTenThousandAppends_hasTheEpsilonOfOneEventOfCountTenThousand() {
    // What a job's ledger looks like after 10,000 rounds: one append of one round per round.
    PrivacyEvent round = PrivacyEvent.sampledGaussian(1.1, 0.01, 1);
    PrivacyLedger appended = PrivacyLedger.EMPTY;
    for (int r = 0; r < 10_000; r++) {
      appended = appended.append(round);
    }
    double whole = epsilon(1.1, 0.01, 10_000, 1e-5).epsilon();
    assertThat(accountant.epsilon(appended, 1e-5).epsilon())
        .isCloseTo(whole, withinPercentage(1e-10));
  }

  @Test
  void ledgerOfOneAppendPerStep_matchesTensorFlowPrivacy_mnist60000_batch150_15epochs() {
    // The TF Privacy figure pinned above (0.72422340261 at order 19, relative tolerance 1e-9),
    // reached by 6,000 appends of one step each, as the round aggregator builds its ledger.
    PrivacyEvent step = PrivacyEvent.sampledGaussian(1.3, 150.0 / 60000, 1);
    PrivacyLedger appended = PrivacyLedger.EMPTY;
    for (int r = 0; r < 6000; r++) {
      appended = appended.append(step);
    }
    PrivacySpent spent = accountant.epsilon(appended, 1e-5);
    assertThat(spent.epsilon()).isCloseTo(0.72422340261, withinPercentage(1e-7));
    assertThat(spent.order()).isEqualTo(19.0);
  }

  @Test
  void rdpOfAMixedLedger_isTheCountWeightedSumOfItsMechanisms() {
    // RDP composes additively (Mironov 2017, Prop. 1): two different mechanisms, relative 1e-12.
    RdpAccountant few = RdpAccountant.withOrders(2, 4.5, 32);
    PrivacyEvent sampled = PrivacyEvent.sampledGaussian(1.1, 0.02, 300);
    PrivacyEvent full = PrivacyEvent.gaussian(4.0, 7);
    double[] mixed = few.rdp(PrivacyLedger.of(sampled, full));
    double[] a = few.rdp(PrivacyLedger.of(sampled));
    double[] b = few.rdp(PrivacyLedger.of(full));
    for (int i = 0; i < mixed.length; i++) {
      assertThat(mixed[i]).isCloseTo(a[i] + b[i], withinPercentage(1e-10));
    }
  }

  @Test
  void defaultAccountant_isShared_soItsMemoOutlivesLookupsByName() {
    assertThat(Accountant.named("rdp")).isSameAs(RdpAccountant.withDefaultOrders());
    // A remembered result equals a fresh computation by another instance over the same orders.
    PrivacyLedger ledger = PrivacyLedger.of(PrivacyEvent.sampledGaussian(1.3, 0.0025, 6000));
    double first = accountant.epsilon(ledger, 1e-5).epsilon();
    assertThat(accountant.epsilon(ledger, 1e-5).epsilon()).isEqualTo(first);
    assertThat(RdpAccountant.withOrders(RdpAccountant.DEFAULT_ORDERS).epsilon(ledger, 1e-5))
        .isEqualTo(accountant.epsilon(ledger, 1e-5));
  }

  @Test
  void deltaForEpsilon_roundTripsWithEpsilonForDelta() {
    PrivacyLedger ledger = PrivacyLedger.of(PrivacyEvent.sampledGaussian(1.3, 0.0025, 6000));
    double eps = accountant.epsilon(ledger, 1e-5).epsilon();
    assertThat(accountant.delta(ledger, eps)).isLessThanOrEqualTo(1e-5 * (1 + 1e-9));
    assertThat(accountant.delta(ledger, eps * 0.9)).isGreaterThan(1e-5);
  }

  @Test
  void customOrders_replaceDefaults_andAreValidated() {
    RdpAccountant few = RdpAccountant.withOrders(2, 4, 8);
    PrivacyLedger ledger = PrivacyLedger.of(PrivacyEvent.sampledGaussian(1.3, 0.0025, 6000));
    PrivacySpent spent = few.epsilon(ledger, 1e-5);
    assertThat(spent.order()).isIn(2.0, 4.0, 8.0);
    assertThat(spent.epsilon()).isGreaterThan(accountant.epsilon(ledger, 1e-5).epsilon());
    assertThatThrownBy(() -> RdpAccountant.withOrders(0.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("every order must be > 1 and finite, was 0.5");
  }

  @Test
  void badDelta_isRefusedWithItsName() {
    assertThatThrownBy(() -> epsilon(1, 0.1, 1, 1.0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delta must be in (0, 1), was 1.0");
  }

  @Test
  void defaultOrders_areTheDocumentedGrid() {
    double[] orders = RdpAccountant.DEFAULT_ORDERS;
    assertThat(orders).hasSize(99 + 53 + 4);
    assertThat(orders[0]).isEqualTo(1.1);
    assertThat(orders[98]).isEqualTo(10.9);
    assertThat(orders[99]).isEqualTo(11.0);
    assertThat(orders[151]).isEqualTo(63.0);
    assertThat(orders).endsWith(128, 256, 512, 1024);
  }

  /**
   * Midpoint-rule integral of A_alpha for the sampled Gaussian; independent of the code under test.
   */
  private static double integrateA(double q, double z, double alpha) {
    int steps = 400_000;
    double lo = -40 * z;
    double hi = 40 * z + 1;
    double h = (hi - lo) / steps;
    double sum = 0;
    for (int i = 0; i < steps; i++) {
      double x = lo + (i + 0.5) * h;
      double logDensity = -x * x / (2 * z * z) - Math.log(z * Math.sqrt(2 * Math.PI));
      double t = (2 * x - 1) / (2 * z * z); // log of the likelihood ratio mu1 / mu0
      double logRatio =
          t > 0
              ? t + Math.log(q) + Math.log1p((1 - q) / q * Math.exp(-t))
              : Math.log1p(q * Math.expm1(t));
      sum += Math.exp(logDensity + alpha * logRatio);
    }
    return sum * h;
  }
}
