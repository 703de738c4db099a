package dev.privagg.correlated;

import java.util.ArrayList;
import java.util.List;

/**
 * BLT_TUPLES of jax_privacy tests/matrix_factorization/buffered_toeplitz_test.py: (theta, omega)
 * pairs in their original order, including ones with negative values, thetas at 1 and tiny gaps.
 */
final class BltTuples {
  private BltTuples() {}

  static List<double[][]> all() {
    List<double[][]> t = new ArrayList<>();
    t.add(new double[][] {{0.99}, {0.1}});
    t.add(new double[][] {{0.9, 0.5, 0.001}, {0.1, 0.2, 0.5}});
    t.add(new double[][] {{0.001}, {0.5}});
    t.add(new double[][] {{0.001}, {-0.1}});
    t.add(new double[][] {{0.99, -0.1}, {0.01, -0.1}});
    t.add(new double[][] {{0.99, -0.1}, {-0.2, 0.1}});
    t.add(new double[][] {{1.0}, {0.001}});
    t.add(new double[][] {{1.0, 1 - 1e-9, 0.99, 0.1}, {1e-6, 1e-5, 1e-3, 1e-2}});
    t.add(
        new double[][] {
          {0.99994829, 0.99591045, 0.76319372, -0.3667193, 0.69954866},
          {0.01202588, 0.08567775, 0.66450507, -0.00384594, -0.25671158}
        });
    t.add(
        new double[][] {
          {0.99999999, 0.77422499, 0.54944999, 0.32467499, 0.09989999},
          {0.00999262, 0.00999992, 0.00999996, 0.00999997, 0.00999998}
        });
    for (int p = 1; p < 12; p++) {
      t.add(new double[][] {{0.9, 0.9 - Math.pow(10, -p)}, {0.1, 0.1}});
    }
    for (int p = 1; p < 12; p++) {
      t.add(new double[][] {{1 - Math.pow(10, -p), 0.8}, {0.1, 0.1}});
    }
    return t;
  }

  /** The tuples {@link BufferedToeplitz#of} accepts (thetas at least 1e-9 apart). */
  static List<BufferedToeplitz> accepted() {
    List<BufferedToeplitz> out = new ArrayList<>();
    for (double[][] tuple : all()) {
      try {
        out.add(BufferedToeplitz.of(tuple[0], tuple[1]));
      } catch (IllegalArgumentException refusedGap) {
        // jax_privacy skips these too where it needs distinct thetas.
      }
    }
    return out;
  }

  static double minGap(BufferedToeplitz blt) {
    double[] t = blt.theta();
    double gap = Double.POSITIVE_INFINITY;
    for (int i = 1; i < t.length; i++) {
      gap = Math.min(gap, t[i - 1] - t[i]);
    }
    return gap;
  }
}
