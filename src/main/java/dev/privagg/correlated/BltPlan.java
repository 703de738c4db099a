package dev.privagg.correlated;

/**
 * A BLT mechanism for a participation schema: the strategy C, its inverse C^-1 (which correlates
 * the noise, {@link BufferedToeplitz#correlate}), the L2 sensitivity of C over all n rounds, and
 * the max and mean per-round squared error of the prefix sums with unit-variance noise. With noise
 * multiplier z, round t's model carries noise of variance {@code (z sensitivity)^2 e_t}, at most
 * {@code (z sensitivity)^2 maxError}.
 *
 * @param schema n, b and k
 * @param strategy C, valid for the mechanism ({@link BufferedToeplitz#requireValidForMechanism})
 * @param inverse C^-1
 * @param sensitivity the min-separation sensitivity of C over n rounds (exact, as C's coefficients
 *     are non-negative and non-increasing)
 * @param maxError the last (largest) round's squared error (Dvijotham et al. 2024, Lemma 5.4)
 * @param meanError the mean squared error over the n rounds
 */
public record BltPlan(
    ParticipationSchema schema,
    BufferedToeplitz strategy,
    BufferedToeplitz inverse,
    double sensitivity,
    double maxError,
    double meanError) {
  private static final long MAX_MATERIALIZED_ROUNDS = 100_000_000;

  public BltPlan {
    if (schema == null || strategy == null || inverse == null) {
      throw new IllegalArgumentException("schema, strategy and inverse must not be null");
    }
    if (!(sensitivity >= 1 && Double.isFinite(sensitivity))) {
      throw new IllegalArgumentException("sensitivity must be >= 1 and finite, was " + sensitivity);
    }
    if (!(maxError > 0 && Double.isFinite(maxError))) {
      throw new IllegalArgumentException("maxError must be > 0 and finite, was " + maxError);
    }
    if (!(meanError > 0 && Double.isFinite(meanError))) {
      throw new IllegalArgumentException("meanError must be > 0 and finite, was " + meanError);
    }
  }

  /** The plan of an optimized strategy ({@link BltOptimizer#optimize}). */
  public static BltPlan optimized(ParticipationSchema schema, int buffers, ErrorKind error) {
    return of(schema, BltOptimizer.optimize(schema, buffers, error));
  }

  /**
   * The plan of an explicit strategy.
   *
   * @throws IllegalArgumentException if C is not valid for the mechanism, or k > 1 and n > 1e8
   */
  public static BltPlan of(ParticipationSchema schema, BufferedToeplitz strategy) {
    strategy.requireValidForMechanism();
    BufferedToeplitz inverse = strategy.inverse();
    long n = schema.rounds();
    double sensitivity =
        minSepSensitivity(strategy, n, schema.minSeparation(), schema.maxParticipations());
    return new BltPlan(
        schema,
        strategy,
        inverse,
        sensitivity,
        BltLoss.maxError(inverse, n),
        BltLoss.meanError(inverse, n));
  }

  /**
   * The min-separation sensitivity of the leading t x t block of C: the release after round t of a
   * run stopped early. Coefficients cut to t, n replaced by t, the same b and k (so k becomes
   * {@code min(k, ceil(t / b))}). Never above {@link #sensitivity()}.
   */
  public double sensitivityOfFirstRounds(long t) {
    if (!(t >= 1 && t <= schema.rounds())) {
      throw new IllegalArgumentException("t must be in [1, " + schema.rounds() + "], was " + t);
    }
    return minSepSensitivity(strategy, t, schema.minSeparation(), schema.maxParticipations());
  }

  /** {@code sensitivity * sqrt(maxError)}, the square root of jax_privacy's max loss. */
  public double rootMaxLoss() {
    return sensitivity * Math.sqrt(maxError);
  }

  /** {@code sensitivity * sqrt(meanError)}. */
  public double rootMeanLoss() {
    return sensitivity * Math.sqrt(meanError);
  }

  /**
   * {@code 1 + ln(n) / pi}: up to constants the optimal root max loss of any Toeplitz strategy
   * under single participation (Dvijotham et al. 2024, Eq. 2.8; Mathias 1993, Cor. 3.5).
   */
  public double optimalToeplitzBound() {
    return 1 + Math.log(schema.rounds()) / Math.PI;
  }

  private static double minSepSensitivity(BufferedToeplitz c, long n, int b, int k) {
    if (ParticipationSchema.effectiveMaxParticipations(n, b, k) == 1) {
      // Single participation: the first column is the longest (Dvijotham et al. 2024, Lemma 5.3).
      // Summed term by term where the coefficients fit, so s_t never falls as t grows (the closed
      // form can, by a rounding step, once c_t^2 no longer registers).
      return Math.sqrt(firstColumnSquaredNorm(c, n));
    }
    if (n > MAX_MATERIALIZED_ROUNDS) {
      throw new IllegalArgumentException(
          "rounds must be <= "
              + MAX_MATERIALIZED_ROUNDS
              + " when a client participates more than once, was "
              + n);
    }
    int rounds = (int) n;
    return Math.sqrt(
        Toeplitz.minSepSensitivitySquared(c.toeplitzCoefficients(rounds), rounds, b, k));
  }

  /** sum_(i < n) c_i^2, streamed in O(n m) time and O(m) memory, in index order. */
  private static double firstColumnSquaredNorm(BufferedToeplitz c, long n) {
    double[] theta = c.theta();
    double[] omega = c.omega();
    double[] power = new double[theta.length];
    java.util.Arrays.fill(power, 1.0);
    double sum = 1; // c_0 = 1
    for (long i = 1; i < n; i++) {
      double ci = 0;
      for (int j = 0; j < theta.length; j++) {
        ci += omega[j] * power[j];
        power[j] *= theta[j];
      }
      sum += ci * ci;
    }
    return sum;
  }
}
