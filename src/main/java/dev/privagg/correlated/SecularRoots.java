package dev.privagg.correlated;

import java.util.Arrays;

/**
 * The roots z of the secular equation {@code f(z) = 1 + sum_j omega_j / (z - theta_j) = 0}, the
 * eigenvalues of {@code diag(theta) - omega 1^T} (Dvijotham et al. 2024, Lemma 5.2): by det(zI - D
 * + omega 1^T) = prod_j (z - theta_j) f(z) (matrix determinant lemma).
 */
final class SecularRoots {
  private static final int MAX_BISECTION_STEPS = 2200;
  private static final int MAX_ABERTH_STEPS = 1000;
  private static final double IMAGINARY_TOLERANCE = 1e-7;

  private SecularRoots() {}

  /** The m roots, decreasing; thetas are distinct and decreasing. */
  static double[] roots(double[] theta, double[] omega) {
    int m = theta.length;
    boolean allPositive = true;
    boolean allNegative = true;
    double sumAbs = 0;
    for (double w : omega) {
      allPositive &= w > 0;
      allNegative &= w < 0;
      sumAbs += Math.abs(w);
    }
    double[] roots = new double[m];
    if (allPositive) {
      // One root in each gap (theta_{i+1}, theta_i) and one in [theta_m - sum(omega), theta_m).
      for (int i = 0; i < m; i++) {
        double lo = i + 1 < m ? theta[i + 1] : theta[m - 1] - sumAbs;
        roots[i] = bisect(theta, omega, lo, theta[i], true);
      }
    } else if (allNegative) {
      // One root in (theta_1, theta_1 + sum|omega|] and one in each gap (theta_{i}, theta_{i-1}).
      for (int i = 0; i < m; i++) {
        double hi = i == 0 ? theta[0] + sumAbs : theta[i - 1];
        roots[i] = bisect(theta, omega, theta[i], hi, false);
      }
    } else {
      roots = aberth(theta, omega);
    }
    Arrays.sort(roots);
    for (int i = 0, j = m - 1; i < j; i++, j--) {
      double t = roots[i];
      roots[i] = roots[j];
      roots[j] = t;
    }
    return roots;
  }

  static double secular(double[] theta, double[] omega, double z) {
    double f = 1;
    for (int j = 0; j < theta.length; j++) {
      f += omega[j] / (z - theta[j]);
    }
    return f;
  }

  /** f is monotone on (lo, hi): decreasing from +inf when omega > 0, increasing from -inf else. */
  private static double bisect(
      double[] theta, double[] omega, double lo, double hi, boolean decreasing) {
    for (int step = 0; step < MAX_BISECTION_STEPS; step++) {
      double mid = lo + 0.5 * (hi - lo);
      if (mid <= lo || mid >= hi) {
        break;
      }
      double f = secular(theta, omega, mid);
      if (f == 0) {
        return mid;
      }
      if ((f > 0) == decreasing) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo + 0.5 * (hi - lo);
  }

  /** Aberth-Ehrlich iteration on the monic numerator polynomial, for omegas of mixed sign. */
  private static double[] aberth(double[] theta, double[] omega) {
    int m = theta.length;
    double[] p = numerator(theta, omega);
    double bound = 0;
    for (int i = 1; i <= m; i++) {
      bound = Math.max(bound, Math.abs(p[i]));
    }
    double radius = 1 + bound;
    double[] re = new double[m];
    double[] im = new double[m];
    for (int k = 0; k < m; k++) {
      double angle = 2 * Math.PI * k / m + 0.4;
      re[k] = 0.5 * radius * Math.cos(angle);
      im[k] = 0.5 * radius * Math.sin(angle);
    }
    double[] v = new double[4];
    for (int step = 0; step < MAX_ABERTH_STEPS; step++) {
      double maxMove = 0;
      for (int k = 0; k < m; k++) {
        horner(p, re[k], im[k], v);
        double pr = v[0];
        double pi = v[1];
        double dr = v[2];
        double di = v[3];
        if (pr == 0 && pi == 0) {
          continue;
        }
        double den = dr * dr + di * di;
        // ratio = P / P'
        double rr = (pr * dr + pi * di) / den;
        double ri = (pi * dr - pr * di) / den;
        double sr = 0;
        double si = 0;
        for (int j = 0; j < m; j++) {
          if (j != k) {
            double xr = re[k] - re[j];
            double xi = im[k] - im[j];
            double d2 = xr * xr + xi * xi;
            sr += xr / d2;
            si -= xi / d2;
          }
        }
        // w = ratio / (1 - ratio * sum)
        double qr = 1 - (rr * sr - ri * si);
        double qi = -(rr * si + ri * sr);
        double q2 = qr * qr + qi * qi;
        double wr = (rr * qr + ri * qi) / q2;
        double wi = (ri * qr - rr * qi) / q2;
        if (!Double.isFinite(wr) || !Double.isFinite(wi)) {
          wr = rr;
          wi = ri;
        }
        re[k] -= wr;
        im[k] -= wi;
        maxMove = Math.max(maxMove, Math.hypot(wr, wi) / Math.max(1, Math.hypot(re[k], im[k])));
      }
      if (maxMove < 1e-16) {
        break;
      }
    }
    double[] roots = new double[m];
    for (int k = 0; k < m; k++) {
      double scale = Math.max(1, Math.hypot(re[k], im[k]));
      if (!(Math.abs(im[k]) <= IMAGINARY_TOLERANCE * scale)) {
        throw new IllegalArgumentException(
            "inverse thetas must be real, found the complex root "
                + re[k]
                + (im[k] < 0 ? " - " : " + ")
                + Math.abs(im[k])
                + "i for theta="
                + Arrays.toString(theta)
                + ", omega="
                + Arrays.toString(omega));
      }
      roots[k] = polish(p, re[k]);
    }
    return roots;
  }

  /** A few real Newton steps on p, kept while they reduce |p|. */
  private static double polish(double[] p, double z) {
    double[] v = new double[4];
    for (int step = 0; step < 8; step++) {
      horner(p, z, 0, v);
      if (v[2] == 0) {
        break;
      }
      double next = z - v[0] / v[2];
      horner(p, next, 0, v);
      double fNext = Math.abs(v[0]);
      horner(p, z, 0, v);
      if (!(fNext < Math.abs(v[0]))) {
        break;
      }
      z = next;
    }
    return z;
  }

  /**
   * Coefficients, highest degree first, of the monic {@code prod_j (z - theta_j) + sum_j omega_j
   * prod_{l != j} (z - theta_l)}.
   */
  static double[] numerator(double[] theta, double[] omega) {
    int m = theta.length;
    double[] result = new double[m + 1];
    double[] full = product(theta, -1);
    System.arraycopy(full, 0, result, 0, m + 1);
    for (int j = 0; j < m; j++) {
      double[] partial = product(theta, j);
      for (int i = 0; i < m; i++) {
        result[i + 1] += omega[j] * partial[i];
      }
    }
    return result;
  }

  /** prod_{l != skip} (z - theta_l), highest degree first. */
  private static double[] product(double[] theta, int skip) {
    double[] c = {1};
    for (int l = 0; l < theta.length; l++) {
      if (l == skip) {
        continue;
      }
      double[] next = new double[c.length + 1];
      for (int i = 0; i < c.length; i++) {
        next[i] += c[i];
        next[i + 1] -= theta[l] * c[i];
      }
      c = next;
    }
    return c;
  }

  /** p(z) and p'(z) at the complex z = (re, im), written to out as (pRe, pIm, dRe, dIm). */
  private static void horner(double[] p, double re, double im, double[] out) {
    double pr = p[0];
    double pi = 0;
    double dr = 0;
    double di = 0;
    for (int i = 1; i < p.length; i++) {
      double ndr = dr * re - di * im + pr;
      double ndi = dr * im + di * re + pi;
      dr = ndr;
      di = ndi;
      double npr = pr * re - pi * im + p[i];
      double npi = pr * im + pi * re;
      pr = npr;
      pi = npi;
    }
    out[0] = pr;
    out[1] = pi;
    out[2] = dr;
    out[3] = di;
  }
}
