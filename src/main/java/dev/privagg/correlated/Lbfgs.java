package dev.privagg.correlated;

import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * A small deterministic L-BFGS minimizer (Nocedal and Wright 2006, Alg. 7.4 and 7.5) with
 * fourth-order central-difference gradients (for the few parameters of a BLT, at most 16) or an
 * analytic gradient, and a backtracking line search that treats a non-finite value as outside the
 * domain.
 */
final class Lbfgs {
  private static final int MEMORY = 10;
  private static final double ARMIJO = 1e-4;

  private final ToDoubleFunction<double[]> f;
  private final BiFunction<double[], Double, double[]> gradient;
  private final int maxIterations;

  Lbfgs(ToDoubleFunction<double[]> f, int maxIterations) {
    this.f = f;
    this.gradient = this::centralDifferences;
    this.maxIterations = maxIterations;
  }

  /** A minimizer of f with its analytic gradient {@code gradient(x)}. */
  Lbfgs(ToDoubleFunction<double[]> f, Function<double[], double[]> gradient, int maxIterations) {
    this.f = f;
    this.gradient = (x, fx) -> gradient.apply(x);
    this.maxIterations = maxIterations;
  }

  /** A local minimum near x0 (a finite starting value is required). */
  double[] minimize(double[] x0) {
    int d = x0.length;
    double[] x = x0.clone();
    double fx = f.applyAsDouble(x);
    if (!Double.isFinite(fx)) {
      throw new IllegalArgumentException("the starting point must have a finite loss, was " + fx);
    }
    double[] g = gradient.apply(x, fx);
    double[][] s = new double[MEMORY][];
    double[][] y = new double[MEMORY][];
    double[] rho = new double[MEMORY];
    int stored = 0;
    int head = 0;
    int stalls = 0;
    for (int iter = 0; iter < maxIterations; iter++) {
      double gNorm = norm(g);
      if (gNorm == 0) {
        break;
      }
      // Two-loop recursion: direction = -H g.
      double[] q = g.clone();
      double[] alpha = new double[MEMORY];
      for (int i = 0; i < stored; i++) {
        int idx = Math.floorMod(head - 1 - i, MEMORY);
        alpha[idx] = rho[idx] * dot(s[idx], q);
        axpy(-alpha[idx], y[idx], q);
      }
      if (stored > 0) {
        int last = Math.floorMod(head - 1, MEMORY);
        scale(dot(s[last], y[last]) / dot(y[last], y[last]), q);
      } else {
        scale(Math.min(1, 0.1 / gNorm), q);
      }
      for (int i = stored - 1; i >= 0; i--) {
        int idx = Math.floorMod(head - 1 - i, MEMORY);
        double beta = rho[idx] * dot(y[idx], q);
        axpy(alpha[idx] - beta, s[idx], q);
      }
      double[] dir = q;
      scale(-1, dir);
      double slope = dot(g, dir);
      if (!(slope < 0)) {
        // Not a descent direction: restart from steepest descent.
        stored = 0;
        dir = g.clone();
        scale(-Math.min(1, 0.1 / gNorm), dir);
        slope = dot(g, dir);
      }
      double step = 1;
      double[] next = new double[d];
      double fNext = Double.NaN;
      boolean accepted = false;
      for (int ls = 0; ls < 80; ls++) {
        for (int i = 0; i < d; i++) {
          next[i] = x[i] + step * dir[i];
        }
        fNext = f.applyAsDouble(next);
        if (Double.isFinite(fNext) && fNext <= fx + ARMIJO * step * slope) {
          accepted = true;
          break;
        }
        step *= 0.5;
      }
      if (!accepted || !(fNext < fx)) {
        if (stored == 0 || ++stalls > 2) {
          break;
        }
        stored = 0;
        continue;
      }
      stalls = 0;
      double[] gNext = gradient.apply(next, fNext);
      double[] sk = new double[d];
      double[] yk = new double[d];
      for (int i = 0; i < d; i++) {
        sk[i] = next[i] - x[i];
        yk[i] = gNext[i] - g[i];
      }
      double sy = dot(sk, yk);
      if (sy > 1e-300) {
        s[head] = sk;
        y[head] = yk;
        rho[head] = 1 / sy;
        head = (head + 1) % MEMORY;
        stored = Math.min(stored + 1, MEMORY);
      }
      double decrease = fx - fNext;
      x = next;
      fx = fNext;
      g = gNext;
      if (decrease <= 1e-16 * Math.abs(fx) && norm(sk) <= 1e-12 * (1 + norm(x))) {
        break;
      }
    }
    return x;
  }

  /**
   * Fourth-order central differences {@code (f(x-2h) - 8 f(x-h) + 8 f(x+h) - f(x+2h)) / 12h}, with
   * h shrunk while a point leaves the domain.
   */
  double[] centralDifferences(double[] x, double fx) {
    int d = x.length;
    double[] g = new double[d];
    double[] p = x.clone();
    for (int i = 0; i < d; i++) {
      double h = 1e-3 * Math.max(1, Math.abs(x[i]));
      double value = Double.NaN;
      for (int tries = 0; tries < 12 && !Double.isFinite(value); tries++, h *= 0.1) {
        p[i] = x[i] - 2 * h;
        double m2 = f.applyAsDouble(p);
        p[i] = x[i] - h;
        double m1 = f.applyAsDouble(p);
        p[i] = x[i] + h;
        double p1 = f.applyAsDouble(p);
        p[i] = x[i] + 2 * h;
        double p2 = f.applyAsDouble(p);
        value = (m2 - 8 * m1 + 8 * p1 - p2) / (12 * h);
      }
      p[i] = x[i];
      g[i] = Double.isFinite(value) ? value : 0;
    }
    return g;
  }

  private static double dot(double[] a, double[] b) {
    double sum = 0;
    for (int i = 0; i < a.length; i++) {
      sum += a[i] * b[i];
    }
    return sum;
  }

  private static double norm(double[] a) {
    return Math.sqrt(dot(a, a));
  }

  private static void axpy(double a, double[] x, double[] y) {
    for (int i = 0; i < y.length; i++) {
      y[i] += a * x[i];
    }
  }

  private static void scale(double a, double[] x) {
    for (int i = 0; i < x.length; i++) {
      x[i] *= a;
    }
  }
}
