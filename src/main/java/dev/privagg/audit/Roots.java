package dev.privagg.audit;

import java.util.function.DoubleUnaryOperator;

/**
 * Brent's root finder (Brent 1973, "Algorithms for Minimization without Derivatives", ch. 4):
 * inverse quadratic or secant steps while they shrink the bracket fast enough, bisection otherwise,
 * so it converges at least as fast as bisection and superlinearly near a simple root. The
 * estimators here bracket a sign change of a monotone function and need the root to an absolute
 * tolerance, as scipy's {@code brentq} does for the reference implementations.
 */
final class Roots {
  /** scipy's brentq default relative tolerance, 4 machine epsilons. */
  private static final double RELATIVE_TOLERANCE = 4 * Math.ulp(1.0);

  private static final int MAX_STEPS = 500;

  private Roots() {}

  /**
   * A root of {@code f} in {@code [lo, hi]} to within {@code xtol + 4 eps |root|}; f(lo) and f(hi)
   * must have opposite signs (or one be zero). Infinite function values are allowed (the
   * estimators' log-deltas are -infinity where delta is 0): the step is then a bisection.
   */
  static double brent(DoubleUnaryOperator f, double lo, double hi, double xtol) {
    if (!(lo < hi) || !Double.isFinite(lo) || !Double.isFinite(hi)) {
      throw new IllegalArgumentException(
          "the bracket must be finite with lo < hi, was [" + lo + ", " + hi + "]");
    }
    if (!(xtol > 0)) {
      throw new IllegalArgumentException("xtol must be > 0, was " + xtol);
    }
    // b is the best estimate, c the other end of the bracket, a the previous b.
    double a = lo;
    double fa = f.applyAsDouble(lo);
    double b = hi;
    double fb = f.applyAsDouble(hi);
    if (fa == 0) {
      return a;
    }
    if (fb == 0) {
      return b;
    }
    if (!(Math.signum(fa) * Math.signum(fb) < 0)) {
      throw new IllegalArgumentException(
          "f must change sign over [" + lo + ", " + hi + "], was f(lo)=" + fa + ", f(hi)=" + fb);
    }
    double c = a;
    double fc = fa;
    double step = b - a;
    double previousStep = step;
    for (int i = 0; i < MAX_STEPS; i++) {
      if (Math.signum(fb) == Math.signum(fc)) {
        c = a;
        fc = fa;
        step = b - a;
        previousStep = step;
      }
      if (Math.abs(fc) < Math.abs(fb)) {
        a = b;
        b = c;
        c = a;
        fa = fb;
        fb = fc;
        fc = fa;
      }
      double tol = 0.5 * (xtol + RELATIVE_TOLERANCE * Math.abs(b));
      double half = 0.5 * (c - b);
      if (fb == 0 || Math.abs(half) <= tol) {
        return b;
      }
      boolean finite = Double.isFinite(fa) && Double.isFinite(fb) && Double.isFinite(fc);
      if (finite && Math.abs(previousStep) >= tol && Math.abs(fa) > Math.abs(fb)) {
        double s = fb / fa;
        double p;
        double q;
        if (a == c) {
          // Secant through (a, fa) and (b, fb).
          p = 2 * half * s;
          q = 1 - s;
        } else {
          // Inverse quadratic interpolation through a, b and c.
          double qa = fa / fc;
          double rb = fb / fc;
          p = s * (2 * half * qa * (qa - rb) - (b - a) * (rb - 1));
          q = (qa - 1) * (rb - 1) * (s - 1);
        }
        if (p > 0) {
          q = -q;
        } else {
          p = -p;
        }
        // Accept the interpolation only if it lands well inside the bracket and the steps keep
        // halving; otherwise bisect.
        if (2 * p < Math.min(3 * half * q - Math.abs(tol * q), Math.abs(previousStep * q))) {
          previousStep = step;
          step = p / q;
        } else {
          step = half;
          previousStep = half;
        }
      } else {
        step = half;
        previousStep = half;
      }
      a = b;
      fa = fb;
      b += Math.abs(step) > tol ? step : Math.copySign(tol, half);
      fb = f.applyAsDouble(b);
    }
    throw new ArithmeticException(
        "Brent's method did not converge in " + MAX_STEPS + " steps on [" + lo + ", " + hi + "]");
  }
}
