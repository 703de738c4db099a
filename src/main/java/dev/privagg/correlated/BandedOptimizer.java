package dev.privagg.correlated;

/**
 * The b-banded Toeplitz strategy of least loss on n rounds' prefix sums (or another {@link
 * Workload}): L-BFGS on the scale-free loss {@code E(C^-1) ||c||^2} with its analytic gradient,
 * from the optimal max-error Toeplitz coefficients cut to b (jax_privacy {@code
 * toeplitz.optimize_banded_toeplitz}, 250 steps).
 */
public final class BandedOptimizer {
  static final int MAX_ITERATIONS = 250;

  private BandedOptimizer() {}

  /**
   * The optimized strategy with {@code bands} bands over {@code n} rounds.
   *
   * @throws IllegalArgumentException if bands is outside [1, min(n, {@link
   *     BandedToeplitz#MAX_BANDS})]
   */
  public static BandedToeplitz optimize(int n, int bands, ErrorKind error) {
    return optimize(n, bands, error, Workload.PREFIX_SUMS);
  }

  /** As {@link #optimize(int, int, ErrorKind)}, for the models {@code workload} releases. */
  public static BandedToeplitz optimize(int n, int bands, ErrorKind error, Workload workload) {
    if (n < 1) {
      throw new IllegalArgumentException("rounds must be >= 1, was " + n);
    }
    if (!(bands >= 1 && bands <= Math.min(n, BandedToeplitz.MAX_BANDS))) {
      throw new IllegalArgumentException(
          "bands must be in [1, "
              + Math.min(n, BandedToeplitz.MAX_BANDS)
              + "] (at most the rounds), was "
              + bands);
    }
    if (bands == 1) {
      return BandedToeplitz.identity();
    }
    double[] start = Toeplitz.optimalMaxErrorStrategyCoefficients(bands);
    double[] best =
        new Lbfgs(
                c -> lossOrInfinity(c, n, error, workload),
                c -> {
                  double[] g = new double[c.length];
                  BandedToeplitz.lossAndGradient(c, n, error, workload, g);
                  return g;
                },
                MAX_ITERATIONS)
            .minimize(start);
    BandedToeplitz optimized = BandedToeplitz.of(best);
    // L-BFGS only accepts decreasing steps, so this holds unless the start was the optimum.
    return optimized.loss(n, error, workload) <= BandedToeplitz.of(start).loss(n, error, workload)
        ? optimized
        : BandedToeplitz.of(start);
  }

  /** The loss, or infinity where c_0 is zero or C^-1 blows up (outside the domain). */
  private static double lossOrInfinity(double[] c, int n, ErrorKind error, Workload workload) {
    if (c[0] == 0) {
      return Double.POSITIVE_INFINITY;
    }
    double loss = BandedToeplitz.lossAndGradient(c, n, error, workload, null);
    return Double.isFinite(loss) ? loss : Double.POSITIVE_INFINITY;
  }
}
