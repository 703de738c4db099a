package dev.privagg.correlated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class BltLossTest {

  // jax_privacy buffered_toeplitz_test.py test_sensitivity: Lemma 5.3 equals ||c||^2 on
  // BLT_TUPLES at n in {1, 2, 10}, and stays below the limit.
  @Test
  void sensitivitySquared_matchesTheCoefficientsOnBltTuples() {
    for (BufferedToeplitz blt : BltTuples.accepted()) {
      for (int n : new int[] {1, 2, 10}) {
        double direct = Toeplitz.sensitivitySquared(blt.toeplitzCoefficients(n), n);
        assertThat(BltLoss.sensitivitySquared(blt, n))
            .as("%s n=%d", blt, n)
            .isCloseTo(direct, within(1e-7 + 1e-7 * direct));
        assertThat(BltLoss.sensitivitySquared(blt, n))
            .isLessThan(BltLoss.limitSensitivitySquared(blt) + 1e-10);
      }
    }
  }

  // jax_privacy buffered_toeplitz_test.py test_limit_sensitivity: n = 1e18 reaches the limit.
  @Test
  void sensitivitySquared_atHugeN_isTheLimit() {
    for (BufferedToeplitz blt : BltTuples.accepted()) {
      boolean below = true;
      for (double t : blt.theta()) {
        below &= t < 1;
      }
      if (below) {
        double limit = BltLoss.limitSensitivitySquared(blt);
        assertThat(BltLoss.sensitivitySquared(blt, 1_000_000_000_000_000_000L))
            .as("%s", blt)
            .isCloseTo(limit, within(1e-7 * limit));
      }
    }
  }

  // jax_privacy buffered_toeplitz_test.py test_max_error: Lemma 5.4 equals the direct
  // computation on BLT_TUPLES (read as noising BLTs) for n in [500, 1000] at rtol 1e-6; also the
  // mean. Tuples with thetas closer than 1e-9 are refused by BufferedToeplitz.of and skipped.
  @Test
  void maxAndMeanError_matchTheDirectComputationOnBltTuples() {
    for (BufferedToeplitz inv : BltTuples.accepted()) {
      for (int n : new int[] {500, 777, 1000}) {
        double[] coef = inv.toeplitzCoefficients(n);
        double max = Toeplitz.maxError(coef, n);
        double mean = Toeplitz.meanError(coef, n);
        assertThat(BltLoss.maxError(inv, n))
            .as("%s n=%d", inv, n)
            .isCloseTo(max, within(1e-6 * max));
        assertThat(BltLoss.meanError(inv, n))
            .as("%s n=%d", inv, n)
            .isCloseTo(mean, within(1e-6 * mean));
      }
    }
  }

  // jax_privacy buffered_toeplitz_test.py test_max_error_hard_case, with 8 of its 11 buffers
  // (thetas 1 - 10^-p for p = 0..7; this class takes at most 8), n in {1000, 10000, 100000}.
  @Test
  void maxError_hardCaseWithThetasNearOne() {
    double[] theta = new double[8];
    double[] omega = new double[8];
    for (int p = 0; p < 8; p++) {
      theta[p] = 1 - Math.pow(10, -p);
      omega[p] = -0.01 * Math.pow(10, -Math.sqrt(p));
    }
    BufferedToeplitz inv = BufferedToeplitz.of(theta, omega);
    for (int n : new int[] {1000, 10000, 100000}) {
      double direct = Toeplitz.maxError(inv.toeplitzCoefficients(n), n);
      assertThat(BltLoss.maxError(inv, n)).as("n=%d", n).isCloseTo(direct, within(1e-5 * direct));
    }
  }

  // google-deepmind/jax_privacy pull request 398: its geometric sum took a series branch for
  // every ratio > 1, so max_loss of buf_decay [0.5], output_scale [2.0] at n = 32 was -315689.0
  // instead of about 6.0359e11 (inverse theta -1.5, ratio 2.25).
  @Test
  void maxLoss_withInverseThetaBelowMinusOne_matchesTheDirectComputation() {
    BufferedToeplitz blt = BufferedToeplitz.of(new double[] {0.5}, new double[] {2.0});
    int n = 32;
    double[] c = blt.toeplitzCoefficients(n);
    double direct =
        Toeplitz.sensitivitySquared(c, n)
            * Toeplitz.maxError(Toeplitz.inverseCoefficients(c, n), n);
    double loss = BltLoss.maxLoss(blt, n);
    assertThat(loss).isCloseTo(direct, within(1e-9 * direct));
    assertThat(loss).isCloseTo(6.0359e11, within(0.0001e11));
    assertThat(blt.inverse().theta()[0]).isCloseTo(-1.5, within(1e-12));
  }

  // jax_privacy buffered_toeplitz_test.py test_max_iter_loss: max_loss equals
  // toeplitz.loss(strategy_coef, reduction_fn=max) on BLT_TUPLES with positive omegas, n in 1..50.
  @Test
  void maxLoss_matchesTheDirectLossOnBltTuples() {
    for (BufferedToeplitz blt : BltTuples.accepted()) {
      boolean positive = true;
      for (double w : blt.omega()) {
        positive &= w > 0;
      }
      if (!positive) {
        continue;
      }
      for (int n : new int[] {1, 2, 3, 7, 20, 50}) {
        double[] c = blt.toeplitzCoefficients(n);
        double direct =
            Toeplitz.sensitivitySquared(c, n)
                * Toeplitz.maxError(Toeplitz.inverseCoefficients(c, n), n);
        assertThat(BltLoss.maxLoss(blt, n))
            .as("%s n=%d", blt, n)
            .isCloseTo(direct, within(1e-7 + 1e-7 * direct));
      }
    }
  }

  // jax_privacy buffered_toeplitz_test.py test_limit_iteration_error: maxError(n) / n -> limit.
  @Test
  void limitMaxError_isTheLimitOfMaxErrorOverN() {
    BufferedToeplitz inv =
        BufferedToeplitz.of(new double[] {0.99, 0.5}, new double[] {-0.05, -0.3});
    long n = 1_000_000_000_000L;
    assertThat(BltLoss.maxError(inv, n) / n)
        .isCloseTo(BltLoss.limitMaxError(inv), within(1e-8 * BltLoss.limitMaxError(inv)));
  }

  // jax_privacy buffered_toeplitz_test.py test_geometric_sum_basic and _near_one.
  @Test
  void geometricSum_basicValuesAndNearOne() {
    assertThat(BltLoss.geometricSum(0.9, 0)).isEqualTo(0.0);
    assertThat(BltLoss.geometricSum(0.9, 1)).isEqualTo(1.0);
    assertThat(BltLoss.geometricSum(0.9, 3)).isCloseTo(1 + 0.9 + 0.81, within(1e-15));
    assertThat(BltLoss.geometricSum(1.0, 100000)).isEqualTo(100000.0);
    for (int p = 1; p <= 10; p++) {
      double r = 1 - Math.pow(10, -p);
      double direct = 0;
      double power = 1;
      for (int t = 0; t < 1000; t++) {
        direct += power;
        power *= r;
      }
      assertThat(BltLoss.geometricSum(r, 1000)).isCloseTo(direct, within(1e-12 * direct));
    }
  }
}
