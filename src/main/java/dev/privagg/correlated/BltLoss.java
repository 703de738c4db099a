package dev.privagg.correlated;

/**
 * Closed forms for a BLT on the prefix-sum workload under single participation, in O(m^2 log n)
 * (Dvijotham et al. 2024, arXiv:2404.16706, Lemmas 5.3 and 5.4), and the loss {@code sens^2 *
 * error} that the optimizer minimizes (jax_privacy {@code max_loss}).
 *
 * <p>Every sum of geometric terms is evaluated by doubling: the sums over rounds {@code 0..a+b-1}
 * follow from those over {@code 0..a-1} and {@code 0..b-1}, so {@code n} rounds take {@code log2 n}
 * combinations. For ratios in [0, inf) every term is non-negative and the result is accurate to a
 * few ulps times {@code log2 n}, with no branch for ratios near 1 and none for ratios above 1
 * (jax_privacy's series branch for every ratio above 1 gave {@code max_loss} = -315689 instead of
 * 6.0359e11 for theta = [0.5], omega = [2.0], n = 32, google-deepmind/jax_privacy pull request
 * 398).
 */
public final class BltLoss {
  private BltLoss() {}

  /**
   * Squared sensitivity of C under single participation, {@code ||C e_0||^2 = 1 + sum_{j,k} omega_j
   * omega_k sum_{t < n-1} (theta_j theta_k)^t} (Dvijotham et al. 2024, Lemma 5.3).
   */
  public static double sensitivitySquared(BufferedToeplitz c, long n) {
    return sensitivitySquared(c.theta(), c.omega(), n);
  }

  static double sensitivitySquared(double[] theta, double[] omega, long n) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, was " + n);
    }
    double sum = 1;
    for (int j = 0; j < theta.length; j++) {
      for (int k = j; k < theta.length; k++) {
        double term = omega[j] * omega[k] * geometricSum(theta[j] * theta[k], n - 1);
        sum += j == k ? term : 2 * term;
      }
    }
    return sum;
  }

  /**
   * The limit of {@link #sensitivitySquared} as n grows, {@code 1 + sum_{j,k} omega_j omega_k / (1
   * - theta_j theta_k)} (Dvijotham et al. 2024, Lemma 5.3); infinite if some {@code |theta_j
   * theta_k| >= 1} with a non-zero omega.
   */
  public static double limitSensitivitySquared(BufferedToeplitz c) {
    double[] theta = c.theta();
    double[] omega = c.omega();
    double sum = 1;
    for (int j = 0; j < theta.length; j++) {
      for (int k = j; k < theta.length; k++) {
        double r = theta[j] * theta[k];
        double term;
        if (omega[j] == 0 || omega[k] == 0) {
          term = 0;
        } else if (Math.abs(r) < 1) {
          // 1 - theta_j theta_k = u_j + u_k - u_j u_k with u = 1 - theta, exact for theta near 1.
          double uj = 1 - theta[j];
          double uk = 1 - theta[k];
          term = omega[j] * omega[k] / (uj + uk - uj * uk);
        } else {
          return Double.POSITIVE_INFINITY;
        }
        sum += j == k ? term : 2 * term;
      }
    }
    return sum;
  }

  /**
   * The largest per-round squared error of the prefix sums with unit-variance noise, the last
   * round's: {@code sum_{t<n} B_t^2} with {@code B_t = 1 + sum_j omegaHat_j G(thetaHat_j, t)},
   * {@code G(theta, t) = sum_{s<t} theta^s}, expanded into single and pairwise sums (Dvijotham et
   * al. 2024, Lemma 5.4). Any real thetas, also above 1 or negative.
   *
   * @param inverse the BLT of the noising matrix C^-1
   */
  public static double maxError(BufferedToeplitz inverse, long n) {
    return errors(inverse.theta(), inverse.omega(), n)[0];
  }

  /**
   * The mean per-round squared error, {@code (1/n) sum_{t<n} (n - t) B_t^2}, by the same doubling
   * with weighted sums (Dvijotham et al. 2024, Lemma 5.4 summed over rounds).
   *
   * @param inverse the BLT of the noising matrix C^-1
   */
  public static double meanError(BufferedToeplitz inverse, long n) {
    return errors(inverse.theta(), inverse.omega(), n)[1];
  }

  /**
   * The limit of {@code maxError / n}, {@code 1 + 2 sum_j omegaHat_j / (1 - thetaHat_j) + (sum_j
   * omegaHat_j / (1 - thetaHat_j))^2} (Dvijotham et al. 2024, Lemma 5.4), for |thetaHat| < 1.
   */
  public static double limitMaxError(BufferedToeplitz inverse) {
    double s = 0;
    for (int j = 0; j < inverse.buffers(); j++) {
      if (!(Math.abs(inverse.theta(j)) < 1)) {
        return Double.POSITIVE_INFINITY;
      }
      s += inverse.omega(j) / (1 - inverse.theta(j));
    }
    return 1 + 2 * s + s * s;
  }

  /** {@code sens^2 * maxError} under single participation (jax_privacy {@code max_loss}). */
  public static double maxLoss(BufferedToeplitz c, long n) {
    return sensitivitySquared(c, n) * maxError(c.inverse(), n);
  }

  /** {@code sens^2 * meanError} under single participation. */
  public static double meanLoss(BufferedToeplitz c, long n) {
    return sensitivitySquared(c, n) * meanError(c.inverse(), n);
  }

  /** {max error, mean error} for the noising BLT (thetaHat, omegaHat), Lemma 5.4. */
  static double[] errors(double[] theta, double[] omega, long n) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, was " + n);
    }
    double nd = n;
    double max = nd;
    double weighted = nd * (nd + 1) / 2;
    double[] pair = new double[STATE];
    for (int j = 0; j < theta.length; j++) {
      for (int k = j; k < theta.length; k++) {
        pairSums(theta[j], theta[k], n, pair);
        if (j == k) {
          // 2 omega_j sum_t G_j(t) and omega_j^2 sum_t G_j(t)^2
          max += 2 * omega[j] * pair[S1P] + omega[j] * omega[j] * pair[S2];
          weighted += 2 * omega[j] * pair[W1P] + omega[j] * omega[j] * pair[W2];
        } else {
          max += 2 * omega[j] * omega[k] * pair[S2];
          weighted += 2 * omega[j] * omega[k] * pair[W2];
        }
      }
    }
    return new double[] {max, weighted / nd};
  }

  /** {@code sum_{t<n} r^t} by doubling: {@code G(a+b) = G(a) + r^a G(b)}. */
  static double geometricSum(double r, long n) {
    double resultPower = 1;
    double resultSum = 0;
    double basePower = r;
    double baseSum = 1;
    long rest = n;
    while (rest > 0) {
      if ((rest & 1) == 1) {
        resultSum += resultPower * baseSum;
        resultPower *= basePower;
      }
      rest >>= 1;
      if (rest > 0) {
        baseSum += basePower * baseSum;
        basePower *= basePower;
      }
    }
    return resultSum;
  }

  // Sums over rounds t < a for ratios p = theta, q = phi, with G(x, t) = sum_{s<t} x^s:
  // length, p^a, q^a, G(p, a), G(q, a), S1 = sum_t G(p, t) (and for q), S2 = sum_t G(p,t) G(q,t),
  // W1 = sum_t (a - t) G(p, t) (and for q), W2 = sum_t (a - t) G(p, t) G(q, t).
  private static final int LEN = 0;
  private static final int P = 1;
  private static final int Q = 2;
  private static final int GP = 3;
  private static final int GQ = 4;
  private static final int S1P = 5;
  private static final int S1Q = 6;
  static final int S2 = 7;
  private static final int W1P = 8;
  private static final int W1Q = 9;
  static final int W2 = 10;
  static final int STATE = 11;

  /** The sums above for n rounds, written to out, by binary powering of the one-round state. */
  static void pairSums(double p, double q, long n, double[] out) {
    double[] result = new double[STATE];
    result[P] = 1;
    result[Q] = 1;
    double[] base = new double[STATE];
    base[LEN] = 1;
    base[P] = p;
    base[Q] = q;
    base[GP] = 1;
    base[GQ] = 1;
    double[] tmp = new double[STATE];
    long rest = n;
    while (rest > 0) {
      if ((rest & 1) == 1) {
        combine(result, base, tmp);
        System.arraycopy(tmp, 0, result, 0, STATE);
      }
      rest >>= 1;
      if (rest > 0) {
        combine(base, base, tmp);
        System.arraycopy(tmp, 0, base, 0, STATE);
      }
    }
    System.arraycopy(result, 0, out, 0, STATE);
  }

  /** The sums over rounds 0..a+b-1 from x (rounds 0..a-1) and y (b rounds), into out. */
  private static void combine(double[] x, double[] y, double[] out) {
    double b = y[LEN];
    double pa = x[P];
    double qa = x[Q];
    double gp = x[GP];
    double gq = x[GQ];
    // G(a + t) = G(a) + p^a G(t)
    out[LEN] = x[LEN] + b;
    out[P] = pa * y[P];
    out[Q] = qa * y[Q];
    out[GP] = gp + pa * y[GP];
    out[GQ] = gq + qa * y[GQ];
    out[S1P] = x[S1P] + b * gp + pa * y[S1P];
    out[S1Q] = x[S1Q] + b * gq + qa * y[S1Q];
    out[S2] = x[S2] + b * gp * gq + gp * qa * y[S1Q] + gq * pa * y[S1P] + pa * qa * y[S2];
    double tri = b * (b + 1) / 2;
    out[W1P] = x[W1P] + b * x[S1P] + gp * tri + pa * y[W1P];
    out[W1Q] = x[W1Q] + b * x[S1Q] + gq * tri + qa * y[W1Q];
    out[W2] =
        x[W2] + b * x[S2] + gp * gq * tri + gp * qa * y[W1Q] + gq * pa * y[W1P] + pa * qa * y[W2];
  }
}
