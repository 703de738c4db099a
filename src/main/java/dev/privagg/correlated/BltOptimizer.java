package dev.privagg.correlated;

/**
 * Finds a BLT strategy C with a given number of buffers that minimizes {@code sens^2 * error} for a
 * participation schema, as jax_privacy's {@code buffered_toeplitz.optimize_loss} with its {@code
 * buf_decay_pair} parameterization (McMahan, Xu and Zhang 2024, arXiv:2408.08868, Sec. 4; Dvijotham
 * et al. 2024, arXiv:2404.16706, Sec. 5).
 *
 * <p>The parameters are the thetas of C and of C^-1, each through a logit so they stay in (0, 1);
 * the omegas of both follow in closed form (McMahan and Pillutla 2025, Thm 2). The loss is divided
 * by {@code k + (1 + ln(n) / pi)^2}, a rough estimate of the optimum, and log barriers of strength
 * 1e-8 keep theta, thetaHat in (0, 1), omega > 0, omegaHat < 0, thetas apart by 1e-12, sum(omega) <
 * 1 and the Pillutla score < 1, exactly jax_privacy's penalties. Single participation (k = 1) uses
 * the closed forms of {@link BltLoss} for both MAX and MEAN (O(m^2 log n) per evaluation, so n up
 * to 1e7 and beyond takes milliseconds); otherwise the coefficients are materialized (O(n m)). The
 * start is the rational approximation to 1/sqrt(1-x) (Dvijotham et al. 2024, Prop. 4.5) with
 * largest theta and Pillutla score at most 1 - 1e-6. L-BFGS with finite-difference gradients in
 * double precision; deterministic.
 */
public final class BltOptimizer {
  static final double PENALTY_STRENGTH = 1e-8;
  static final double MIN_THETA_GAP = 1e-12;
  private static final int MAX_ITERATIONS = 1000;
  private static final int MAX_MATERIALIZED_ROUNDS = 100_000_000;

  private BltOptimizer() {}

  /**
   * The optimized strategy C.
   *
   * @throws IllegalArgumentException if buffers is outside [0, 8], or k > 1 and the rounds exceed
   *     1e8 (the coefficients must be materialized), or the result is not a valid mechanism
   */
  public static BufferedToeplitz optimize(
      ParticipationSchema schema, int buffers, ErrorKind error) {
    if (!(buffers >= 0 && buffers <= BufferedToeplitz.MAX_BUFFERS)) {
      throw new IllegalArgumentException(
          "buffers must be in [0, " + BufferedToeplitz.MAX_BUFFERS + "], was " + buffers);
    }
    if (buffers == 0) {
      return BufferedToeplitz.identity();
    }
    Objective objective = new Objective(schema, error);
    BufferedToeplitz init = rationalApproxToSqrt(buffers, 1 - 1e-6, 1 - 1e-6);
    double[] theta = init.theta();
    double[] thetaHat = init.inverse().theta();
    double[] x = new double[2 * buffers];
    for (int j = 0; j < buffers; j++) {
      x[j] = logit(theta[j]);
      x[buffers + j] = logit(thetaHat[j]);
    }
    double[] best = new Lbfgs(objective::penalized, MAX_ITERATIONS).minimize(x);
    double[][] pair = objective.thetas(best);
    BufferedToeplitz c = BufferedToeplitz.pairFromThetas(pair[0], pair[1])[0];
    c.requireValidForMechanism();
    return c;
  }

  /**
   * A BLT whose coefficients approximate those of 1/sqrt(1-x), the optimal Toeplitz strategy: the
   * inverse of the BLT built from the rational approximation to sqrt(1-x) (Dvijotham et al. 2024,
   * Prop. 4.5; jax_privacy {@code from_rational_approx_to_sqrt_x} with {@code buf_decay_scale} 1.6
   * and {@code buf_decay_shift} -1), then thetas scaled so the largest is at most maxTheta and
   * omegas so the Pillutla score is at most maxPillutlaScore.
   */
  public static BufferedToeplitz rationalApproxToSqrt(
      int buffers, double maxTheta, double maxPillutlaScore) {
    if (!(buffers >= 1 && buffers <= BufferedToeplitz.MAX_BUFFERS)) {
      throw new IllegalArgumentException(
          "buffers must be in [1, " + BufferedToeplitz.MAX_BUFFERS + "], was " + buffers);
    }
    int d1 = (buffers + 1) / 2;
    // Prop. 4.5: step h = 1.6 pi / sqrt(2 (d1 + 1)), nodes k = -d1 + 1 .. m - d1, shifted by -1.
    double h = 1.6 * Math.PI / Math.sqrt(2.0 * (d1 + 1));
    double[] decay = new double[buffers];
    double[] scale = new double[buffers];
    double constant = 0;
    for (int i = 0; i < buffers; i++) {
      int k = -d1 + 1 + i - 1;
      decay[i] = 1 / (1 + Math.exp(2 * h * k));
      scale[i] = -(decay[i] * decay[i]) * Math.exp(3 * h * k);
      constant += Math.exp(h * k) * decay[i];
    }
    for (int i = 0; i < buffers; i++) {
      scale[i] /= constant;
    }
    BufferedToeplitz c = BufferedToeplitz.of(decay, scale).inverse();
    double[] theta = c.theta();
    double[] omega = c.omega();
    double thetaScale = Math.min(1, maxTheta / theta[0]);
    for (int j = 0; j < buffers; j++) {
      theta[j] *= thetaScale;
    }
    double score = 0;
    for (int j = 0; j < buffers; j++) {
      score += omega[j] / theta[j];
    }
    double omegaScale = Math.min(1, maxPillutlaScore / score);
    for (int j = 0; j < buffers; j++) {
      omega[j] *= omegaScale;
    }
    return BufferedToeplitz.of(theta, omega);
  }

  static double logit(double p) {
    return Math.log(p) - Math.log1p(-p);
  }

  static double sigmoid(double x) {
    return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
  }

  /** The penalized, normalized loss of jax_privacy's {@code LossFn.penalized_loss}. */
  static final class Objective {
    private final long n;
    private final int minSep;
    private final int k;
    private final ErrorKind error;
    private final boolean closedForm;
    private final double normalization;

    Objective(ParticipationSchema schema, ErrorKind error) {
      this.n = schema.rounds();
      this.minSep = schema.minSeparation();
      this.k = schema.effectiveMaxParticipations();
      this.error = error;
      this.closedForm = k == 1;
      if (!closedForm && n > MAX_MATERIALIZED_ROUNDS) {
        throw new IllegalArgumentException(
            "rounds must be <= "
                + MAX_MATERIALIZED_ROUNDS
                + " when a client participates more than once, was "
                + n);
      }
      double root = 1 + Math.log(n) / Math.PI;
      this.normalization = k + root * root;
    }

    double[][] thetas(double[] x) {
      int m = x.length / 2;
      double[] theta = new double[m];
      double[] thetaHat = new double[m];
      for (int j = 0; j < m; j++) {
        theta[j] = sigmoid(x[j]);
        thetaHat[j] = sigmoid(x[m + j]);
      }
      return new double[][] {theta, thetaHat};
    }

    double penalized(double[] x) {
      double[][] pair = thetas(x);
      double[] theta = pair[0];
      double[] thetaHat = pair[1];
      double[] omega = BufferedToeplitz.pairOmega(theta, thetaHat);
      double[] omegaHat = BufferedToeplitz.pairOmega(thetaHat, theta);
      double penalty = 0;
      double sumOmega = 0;
      double score = 0;
      for (int j = 0; j < theta.length; j++) {
        penalty -= Math.log(theta[j]) + Math.log1p(-theta[j]) + Math.log(omega[j]);
        penalty -= Math.log(thetaHat[j]) + Math.log1p(-thetaHat[j]) + Math.log(-omegaHat[j]);
        sumOmega += omega[j];
        score += omega[j] / theta[j];
      }
      if (theta.length > 1) {
        penalty -=
            Math.log(minGap(theta) - MIN_THETA_GAP) + Math.log(minGap(thetaHat) - MIN_THETA_GAP);
      }
      penalty -= Math.log1p(-sumOmega) + Math.log1p(-score);
      if (!Double.isFinite(penalty)) {
        return Double.NaN;
      }
      double loss = loss(theta, omega, thetaHat, omegaHat) / normalization;
      return loss + PENALTY_STRENGTH * penalty;
    }

    /** sens^2 * error for C = (theta, omega) and C^-1 = (thetaHat, omegaHat). */
    double loss(double[] theta, double[] omega, double[] thetaHat, double[] omegaHat) {
      if (closedForm) {
        double[] errors = BltLoss.errors(thetaHat, omegaHat, n);
        return BltLoss.sensitivitySquared(theta, omega, n)
            * (error == ErrorKind.MAX ? errors[0] : errors[1]);
      }
      int rounds = (int) n;
      double[] c = BufferedToeplitz.coefficients(theta, omega, rounds);
      double sens = Toeplitz.minSepSensitivitySquared(c, rounds, minSep, k);
      double[] noising = BufferedToeplitz.coefficients(thetaHat, omegaHat, rounds);
      double err =
          error == ErrorKind.MAX
              ? Toeplitz.maxError(noising, rounds)
              : Toeplitz.meanError(noising, rounds);
      return sens * err;
    }
  }

  static double minGap(double[] t) {
    double gap = Double.POSITIVE_INFINITY;
    for (int i = 0; i < t.length; i++) {
      for (int j = i + 1; j < t.length; j++) {
        gap = Math.min(gap, Math.abs(t[i] - t[j]));
      }
    }
    return gap;
  }
}
