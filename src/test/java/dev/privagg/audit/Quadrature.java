package dev.privagg.audit;

import java.util.function.DoubleUnaryOperator;

/**
 * Composite 20-point Gauss-Legendre quadrature, to check integrals in tests: exact for polynomials
 * of degree 39 on each panel, so smooth integrands converge to rounding within a few panels.
 */
final class Quadrature {
  private static final int ORDER = 20;
  private static final double[] NODES = new double[ORDER];
  private static final double[] WEIGHTS = new double[ORDER];

  static {
    // Roots of the Legendre polynomial P_20 by Newton from Chebyshev guesses; w = 2 / ((1 - x^2)
    // P'(x)^2) (Abramowitz and Stegun 25.4.29).
    for (int i = 0; i < ORDER; i++) {
      double x = Math.cos(Math.PI * (i + 0.75) / (ORDER + 0.5));
      double derivative = 0;
      for (int step = 0; step < 100; step++) {
        double p0 = 1;
        double p1 = x;
        for (int k = 2; k <= ORDER; k++) {
          double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        derivative = ORDER * (x * p1 - p0) / (x * x - 1);
        double dx = p1 / derivative;
        x -= dx;
        if (Math.abs(dx) < 1e-16) {
          break;
        }
      }
      NODES[i] = x;
      WEIGHTS[i] = 2 / ((1 - x * x) * derivative * derivative);
    }
  }

  private Quadrature() {}

  /** The integral of f over [a, b] on one panel. */
  static double gaussLegendre(DoubleUnaryOperator f, double a, double b) {
    double half = 0.5 * (b - a);
    double mid = 0.5 * (a + b);
    double sum = 0;
    for (int i = 0; i < ORDER; i++) {
      sum += WEIGHTS[i] * f.applyAsDouble(mid + half * NODES[i]);
    }
    return half * sum;
  }

  /** The integral of f over the panels between consecutive sorted cut points. */
  static double overPanels(DoubleUnaryOperator f, double[] sortedCuts) {
    double total = 0;
    for (int k = 0; k + 1 < sortedCuts.length; k++) {
      if (sortedCuts[k + 1] > sortedCuts[k]) {
        total += gaussLegendre(f, sortedCuts[k], sortedCuts[k + 1]);
      }
    }
    return total;
  }
}
