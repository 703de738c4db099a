package dev.privagg.correlated;

/**
 * Lower-triangular Toeplitz matrices given by their first column (the coefficients), for the matrix
 * mechanism on the prefix-sum workload A = B C with B = A C^-1. A coefficient array shorter than n
 * is padded with zeros; a longer one is cut to n.
 */
public final class Toeplitz {
  private Toeplitz() {}

  /**
   * Squared sensitivity of C under min-separation participation: at most k participations, in
   * rounds whose indices differ by at least b (b = 1 allows every round), k taken as {@code min(k,
   * ceil(n / b))}. For non-negative, non-increasing coefficients the worst case is k participations
   * exactly b apart from round 0, so {@code sens^2 = sum_i (sum_{p<k} c_{i - p b})^2} (Kalinin and
   * Lampert, NeurIPS 2024, arXiv:2405.13763, Thm 2; jax_privacy {@code
   * toeplitz.minsep_sensitivity_squared}). Other coefficients are first replaced by their
   * non-increasing envelope {@code max_{j >= i} |c_j|}, as jax_privacy does, which gives an upper
   * bound instead of the exact value. O(n).
   */
  public static double minSepSensitivitySquared(
      double[] coefficients, int n, int minSep, int maxParticipations) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, was " + n);
    }
    if (minSep < 1) {
      throw new IllegalArgumentException("minSep must be >= 1, was " + minSep);
    }
    if (maxParticipations < 1) {
      throw new IllegalArgumentException(
          "maxParticipations must be >= 1, was " + maxParticipations);
    }
    double[] c = envelope(coefficients, n);
    int k = ParticipationSchema.effectiveMaxParticipations(n, minSep, maxParticipations);
    double[] v = new double[n];
    double sum = 0;
    long span = (long) minSep * k;
    for (int i = 0; i < n; i++) {
      // Column sum of k participations b apart: v_i = v_{i-b} + c_i - c_{i-kb}.
      double value = c[i] + (i >= minSep ? v[i - minSep] : 0);
      if (i >= span) {
        value -= c[(int) (i - span)];
      }
      v[i] = value;
      sum += value * value;
    }
    return sum;
  }

  /** Squared sensitivity under single participation, {@code sum_{i<n} c_i^2}. */
  public static double sensitivitySquared(double[] coefficients, int n) {
    double sum = 0;
    for (int i = 0; i < Math.min(n, coefficients.length); i++) {
      sum += coefficients[i] * coefficients[i];
    }
    return sum;
  }

  /** {@code max_{j >= i, j < n} |c_j|}, zero beyond the given coefficients. */
  static double[] envelope(double[] coefficients, int n) {
    double[] c = new double[n];
    double running = 0;
    for (int i = Math.min(n, coefficients.length) - 1; i >= 0; i--) {
      running = Math.max(running, Math.abs(coefficients[i]));
      c[i] = running;
    }
    return c;
  }

  /**
   * Per-round squared error of the prefix sums with unit-variance noise Z, from the noising
   * coefficients of C^-1: round i errs by {@code (A C^-1 Z)_i}, of variance {@code e_i = sum_{t<=i}
   * B_t^2} with {@code B = cumsum(noising)} (jax_privacy {@code toeplitz.per_query_error}).
   */
  public static double[] perQueryError(double[] noisingCoefficients, int n) {
    double[] e = new double[n];
    double prefix = 0;
    double sum = 0;
    for (int t = 0; t < n; t++) {
      prefix += t < noisingCoefficients.length ? noisingCoefficients[t] : 0;
      sum += prefix * prefix;
      e[t] = sum;
    }
    return e;
  }

  /** The largest per-round squared error, the last round's (all terms are non-negative). */
  public static double maxError(double[] noisingCoefficients, int n) {
    return perQueryError(noisingCoefficients, n)[n - 1];
  }

  /** The mean per-round squared error. */
  public static double meanError(double[] noisingCoefficients, int n) {
    double[] e = perQueryError(noisingCoefficients, n);
    double sum = 0;
    for (double v : e) {
      sum += v;
    }
    return sum / n;
  }

  /** The first n coefficients of the product of two lower-triangular Toeplitz matrices. */
  public static double[] multiply(double[] a, double[] b, int n) {
    double[] c = new double[n];
    for (int k = 0; k < n; k++) {
      double sum = 0;
      for (int i = 0; i <= k; i++) {
        if (i < a.length && k - i < b.length) {
          sum += a[i] * b[k - i];
        }
      }
      c[k] = sum;
    }
    return c;
  }

  /** The first n coefficients of C^-1, by forward substitution on C x = e_0. O(n^2). */
  public static double[] inverseCoefficients(double[] coefficients, int n) {
    if (!(coefficients.length > 0 && coefficients[0] != 0)) {
      throw new IllegalArgumentException("coefficients[0] must be non-zero");
    }
    double[] x = new double[n];
    for (int k = 0; k < n; k++) {
      double rhs = k == 0 ? 1 : 0;
      for (int i = 1; i <= k && i < coefficients.length; i++) {
        rhs -= coefficients[i] * x[k - i];
      }
      x[k] = rhs / coefficients[0];
    }
    return x;
  }

  /**
   * The optimal Toeplitz strategy for max error, C = A^(1/2): {@code c_k = binomial(2k, k) / 4^k}
   * (Fichtenberger, Henzinger and Upadhyay 2023, arXiv:2202.11205; optimal by Dvijotham et al.
   * 2024, Thm 1.1; jax_privacy {@code optimal_max_error_strategy_coefs}).
   */
  public static double[] optimalMaxErrorStrategyCoefficients(int n) {
    double[] c = new double[n];
    double value = 1;
    for (int k = 0; k < n; k++) {
      // c_k = c_{k-1} (2k - 1) / (2k)
      if (k > 0) {
        value *= (2.0 * k - 1) / (2.0 * k);
      }
      c[k] = value;
    }
    return c;
  }

  /**
   * The inverse of {@link #optimalMaxErrorStrategyCoefficients}: since C = A^(1/2), C^-1 = A^-1 C,
   * the first differences of c (jax_privacy {@code optimal_max_error_noising_coefs}).
   */
  public static double[] optimalMaxErrorNoisingCoefficients(int n) {
    double[] c = optimalMaxErrorStrategyCoefficients(n);
    double[] d = new double[n];
    for (int k = 0; k < n; k++) {
      d[k] = c[k] - (k > 0 ? c[k - 1] : 0);
    }
    return d;
  }
}
