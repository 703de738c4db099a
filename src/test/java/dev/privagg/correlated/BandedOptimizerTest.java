package dev.privagg.correlated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BandedOptimizerTest {

  // jax_privacy tests/matrix_factorization/toeplitz_test.py test_toeplitz_more_bands_is_better:
  // n = 16, b in {1, 5, 10, 15}: b + 1 bands lose no more than b.
  @Test
  void moreBands_neverWorse() {
    for (int b : new int[] {1, 5, 10, 15}) {
      for (ErrorKind kind : ErrorKind.values()) {
        double fewer = BandedOptimizer.optimize(16, b, kind).loss(16, kind);
        double more = BandedOptimizer.optimize(16, b + 1, kind).loss(16, kind);
        assertThat(more).as("%s b=%d", kind, b).isLessThanOrEqualTo(fewer * (1 + 1e-9));
      }
    }
  }

  @Test
  void optimized_beatsItsStart_andIndependentNoise() {
    int n = 200;
    for (ErrorKind kind : ErrorKind.values()) {
      BandedToeplitz optimized = BandedOptimizer.optimize(n, 8, kind);
      double start =
          BandedToeplitz.of(Toeplitz.optimalMaxErrorStrategyCoefficients(8)).loss(n, kind);
      assertThat(optimized.loss(n, kind)).isLessThan(start);
      // Independent noise: mean (n + 1) / 2, max n. Eight bands cut it by more than half.
      assertThat(optimized.loss(n, kind)).isLessThan(0.5 * BandedToeplitz.identity().loss(n, kind));
      assertThat(optimized.bands()).isEqualTo(8);
    }
  }

  // With all n bands the banded optimum is the optimal Toeplitz strategy: for the max error that
  // is C = A^(1/2) (Fichtenberger et al. 2023; optimal among Toeplitz by Dvijotham et al. 2024).
  @Test
  void allBands_maxError_reachesTheSquareRootFactorization() {
    int n = 24;
    double optimum =
        BandedToeplitz.of(Toeplitz.optimalMaxErrorStrategyCoefficients(n)).loss(n, ErrorKind.MAX);
    double found = BandedOptimizer.optimize(n, n, ErrorKind.MAX).loss(n, ErrorKind.MAX);
    assertThat(found).isBetween(optimum * (1 - 1e-6), optimum * (1 + 1e-6));
  }

  // Planned for the server's momentum, the strategy beats the prefix-sum one on the momentum
  // workload it was planned for (and loses on the prefix sums it was not).
  @Test
  void underMomentum_theStrategyPlannedForIt_beatsThePrefixSumOne() {
    int n = 100;
    Workload momentum = new Workload(0.9);
    BandedToeplitz forMomentum = BandedOptimizer.optimize(n, 6, ErrorKind.MEAN, momentum);
    BandedToeplitz forSums = BandedOptimizer.optimize(n, 6, ErrorKind.MEAN);
    assertThat(forMomentum.loss(n, ErrorKind.MEAN, momentum))
        .isLessThan(0.99 * forSums.loss(n, ErrorKind.MEAN, momentum));
    assertThat(forSums.loss(n, ErrorKind.MEAN)).isLessThan(forMomentum.loss(n, ErrorKind.MEAN));
    assertThat(forMomentum.loss(n, ErrorKind.MEAN, momentum))
        .isLessThan(BandedToeplitz.identity().loss(n, ErrorKind.MEAN, momentum));
  }

  @Test
  void bandsOutOfRange_refused() {
    assertThatThrownBy(() -> BandedOptimizer.optimize(10, 11, ErrorKind.MEAN))
        .hasMessageContaining("bands must be in [1, 10]");
    assertThatThrownBy(() -> BandedOptimizer.optimize(10, 0, ErrorKind.MEAN))
        .hasMessageContaining("bands must be in [1, 10]");
  }
}
