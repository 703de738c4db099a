package dev.privagg.correlated;

/**
 * The linear map from the rounds' noisy averages to the models the server releases, whose error a
 * strategy is optimized for: the prefix sums (server SGD), or with heavy-ball momentum beta
 * (FedAvgM: m_t = beta m_(t-1) + Delta_t, x_t = x_(t-1) + eta m_t) the prefix sums of the momentum
 * buffer, A[t][s] = (1 - beta^(t-s+1)) / (1 - beta) (jax_privacy {@code
 * optimization.momentum_sgd_matrix} without a learning-rate schedule). Both are lower-triangular
 * Toeplitz, so A C^-1 is too, and A applied to C^-1's first column gives A C^-1's.
 *
 * @param momentum beta in [0, 1); 0 is the plain prefix sums
 */
public record Workload(double momentum) {
  /** Server SGD: the model is the prefix sum of the averages. */
  public static final Workload PREFIX_SUMS = new Workload(0);

  /**
   * @throws IllegalArgumentException if momentum is outside [0, 1)
   */
  public Workload {
    if (!(momentum >= 0 && momentum < 1)) {
      throw new IllegalArgumentException("momentum must be in [0, 1), was " + momentum);
    }
  }

  /**
   * The workload of a server whose model sums the averages through {@code momentum} (its {@code
   * linearMomentum}); NaN, a server whose steps are not linear in them (Adam, Yogi), is planned for
   * as the prefix sums.
   */
  public static Workload ofServerMomentum(double momentum) {
    return Double.isNaN(momentum) ? PREFIX_SUMS : new Workload(momentum);
  }

  /** A x, for x the first column of a lower-triangular Toeplitz matrix: O(n). */
  double[] apply(double[] x) {
    double[] out = new double[x.length];
    double buffer = 0;
    double sum = 0;
    for (int u = 0; u < x.length; u++) {
      buffer = momentum * buffer + x[u];
      sum += buffer;
      out[u] = sum;
    }
    return out;
  }

  /**
   * A^T r: (A^T r)_j = sum_(u >= j) a_(u-j) r_u, with a_k = sum_(i <= k) beta^i; as a suffix sum
   * S_j of r and g_j = S_j + beta g_(j+1). O(n).
   */
  double[] transposeApply(double[] r) {
    double[] out = new double[r.length];
    double suffix = 0;
    double next = 0;
    for (int j = r.length - 1; j >= 0; j--) {
      suffix += r[j];
      next = suffix + momentum * next;
      out[j] = next;
    }
    return out;
  }

  /** How a calculator names it. */
  public String describe() {
    return momentum == 0 ? "prefix sums" : "momentum " + momentum + " prefix sums";
  }
}
