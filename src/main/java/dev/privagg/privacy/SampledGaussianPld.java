package dev.privagg.privacy;

import org.apache.commons.numbers.gamma.Erfc;

/**
 * One round of the Poisson-subsampled Gaussian as a pessimistic discrete privacy loss distribution,
 * by the connect-the-dots discretization (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect
 * the Dots", PETS 2022, Alg. 1), in each direction of add/remove-one adjacency with sensitivity 1
 * and noise std {@code z}:
 *
 * <ul>
 *   <li>remove: P = (1-q) N(0, z^2) + q N(1, z^2), Q = N(0, z^2), loss L(x) = log(1 - q + q e^((2x
 *       - 1) / (2 z^2))), increasing in x, above log(1 - q);
 *   <li>add: P = N(0, z^2), Q = the mixture, loss -L(x), below -log(1 - q).
 * </ul>
 *
 * <p>Because the loss is monotone in x, the P and Q masses of every loss interval (l_i, l_i + h]
 * are differences of normal CDFs at the x-thresholds of its ends (erfc, accurate in the tails where
 * the masses are tiny). Each interval's mass is split between its two ends so that both its P mass
 * and its Q mass are kept: the fraction of P going up is (P_I - e^(l_i) Q_I) / (1 - e^(-h)) / P_I.
 * Seen from Q this spreads the likelihood ratio on the interval to its two ends with the same mean,
 * so by Jensen E_Q[(P/Q - e^eps)_+] can only grow at every eps: the discrete pair dominates the
 * true one, and dominating pairs compose (Zhu, Dong, Wang, AISTATS 2022, Thm. 10). Unlike rounding
 * every loss up to the grid, whose error adds up to about h/2 per round (0.7 after 14,062 rounds at
 * h = 1e-4), the spread costs second order in h per round.
 *
 * <p>Tails: P mass beyond the x at {@value #TAIL_STD} standard deviations (below 1e-17) is moved
 * pessimistically: mass above the grid goes to +infinity, mass below it up to the lowest grid
 * point.
 */
final class SampledGaussianPld {
  /** Standard deviations of x kept on the grid; the normal tail beyond is below 1e-17. */
  static final double TAIL_STD = 8.5;

  /**
   * Smallest Q mass of an interval split by connect-the-dots: below it Q's mass is subnormal or 0
   * (where the loss is above about 670) and e^l times it loses its precision, or is Infinity times
   * 0 = NaN past a loss of 709.78; such an interval's P mass all goes to its upper end instead.
   */
  static final double MIN_Q_MASS = 0x1p-970;

  private SampledGaussianPld() {}

  /**
   * One round's PLD in one direction on the grid {@code k * interval}; the grid is coarsened by
   * powers of 2 when the loss range would need more than {@link DiscretePld#MAX_POINTS} points.
   * {@code noiseMultiplier} must be > 0.
   */
  static DiscretePld perRound(
      double samplingRate, double noiseMultiplier, boolean remove, double interval) {
    double q = samplingRate;
    double z = noiseMultiplier;
    double xHigh = (remove ? 1 : 0) + TAIL_STD * z; // P's upper tail in x
    double xLow = (remove ? 1 : 0) - TAIL_STD * z; // P's lower tail, only for q = 1
    double lossLow;
    double lossHigh;
    if (remove) {
      lossLow = q < 1 ? StrictMath.log1p(-q) : removeLoss(q, z, xLow);
      lossHigh = removeLoss(q, z, xHigh);
    } else {
      lossLow = -removeLoss(q, z, xHigh);
      lossHigh = q < 1 ? -StrictMath.log1p(-q) : -removeLoss(q, z, xLow);
    }
    double h = interval;
    while ((lossHigh - lossLow) / h > DiscretePld.MAX_POINTS - 4) {
      h *= 2;
    }
    long first = (long) Math.floor(lossLow / h);
    long last = (long) Math.ceil(lossHigh / h);
    int n = (int) (last - first + 1);
    double[] mass = new double[n];
    double shrink = -StrictMath.expm1(-h);

    // x-threshold of each grid boundary, oriented so that boundary i+1 lies above boundary i in
    // loss; the P and Q masses between consecutive boundaries follow.
    double previousX = threshold(q, z, remove, first * h);
    // mass of P at losses <= the lowest grid point moves up to it
    double[] belowLowest = intervalMasses(q, z, remove, Double.NaN, previousX);
    mass[0] += belowLowest[0];
    for (int i = 0; i + 1 < n; i++) {
      double nextX = threshold(q, z, remove, (first + i + 1) * h);
      double[] pq = intervalMasses(q, z, remove, previousX, nextX);
      double p = pq[0];
      double up = p; // all of it up, rounding the loss up, where Q's mass is not a normal double
      if (pq[1] >= MIN_Q_MASS) {
        // Q <= e^(-l) P <= e^(-l) here, so l < 671 and e^l is finite
        up = (p - StrictMath.exp((first + i) * h) * pq[1]) / shrink;
        up = Math.min(p, Math.max(0, up));
      }
      mass[i] += p - up;
      mass[i + 1] += up;
      previousX = nextX;
    }
    double infinity = intervalMasses(q, z, remove, previousX, Double.NaN)[0];
    return DiscretePld.truncated(h, first, mass, infinity, 1, 0);
  }

  /** Loss of the remove direction at x: log(1 - q + q e^((2x - 1) / (2 z^2))). */
  static double removeLoss(double q, double z, double x) {
    double exponent = (2 * x - 1) / (2 * z * z);
    if (q == 1) {
      return exponent;
    }
    // log(1 - q + q e^a) = log1p(-q) + log1p(q / (1 - q) e^a), kept finite for large a
    double logRatio = StrictMath.log(q) - StrictMath.log1p(-q) + exponent;
    double tail = logRatio > 30 ? logRatio : StrictMath.log1p(StrictMath.exp(logRatio));
    return StrictMath.log1p(-q) + tail;
  }

  /**
   * The x at which the remove loss equals {@code loss} (for add, at which it equals -loss): x = z^2
   * log((e^l - (1 - q)) / q) + 1/2; -infinity when l <= log(1 - q).
   */
  private static double threshold(double q, double z, boolean remove, double loss) {
    double l = remove ? loss : -loss;
    if (q == 1) {
      return z * z * l + 0.5;
    }
    double excess = StrictMath.expm1(l) + q; // e^l - (1 - q)
    if (!(excess > 0)) {
      return Double.NEGATIVE_INFINITY;
    }
    return z * z * (StrictMath.log(excess) - StrictMath.log(q)) + 0.5;
  }

  /**
   * P and Q masses of the losses between the boundaries with x-thresholds {@code fromX} and {@code
   * toX} (NaN meaning the open end of the loss axis). For remove, higher loss is higher x; for add,
   * lower x.
   */
  private static double[] intervalMasses(
      double q, double z, boolean remove, double fromX, double toX) {
    double xa;
    double xb;
    if (remove) {
      xa = Double.isNaN(fromX) ? Double.NEGATIVE_INFINITY : fromX;
      xb = Double.isNaN(toX) ? Double.POSITIVE_INFINITY : toX;
    } else {
      xa = Double.isNaN(toX) ? Double.NEGATIVE_INFINITY : toX;
      xb = Double.isNaN(fromX) ? Double.POSITIVE_INFINITY : fromX;
    }
    if (!(xb > xa)) {
      return new double[] {0, 0};
    }
    double base = normalMass(xa / z, xb / z);
    double shifted = normalMass((xa - 1) / z, (xb - 1) / z);
    double mixture = (1 - q) * base + q * shifted;
    return remove ? new double[] {mixture, base} : new double[] {base, mixture};
  }

  /** Phi(hi) - Phi(lo) for lo < hi, from the tail on the side where both lie, so tiny is exact. */
  static double normalMass(double lo, double hi) {
    if (lo >= 0) {
      return 0.5 * (erfc(lo) - erfc(hi));
    }
    if (hi <= 0) {
      return 0.5 * (erfc(-hi) - erfc(-lo));
    }
    return 1 - 0.5 * erfc(-lo) - 0.5 * erfc(hi);
  }

  /** erfc(t / sqrt 2), 2 Phi(-t), with the infinite ends exact. */
  private static double erfc(double t) {
    if (t == Double.POSITIVE_INFINITY) {
      return 0;
    }
    if (t == Double.NEGATIVE_INFINITY) {
      return 2;
    }
    return Erfc.value(t / Math.sqrt(2));
  }
}
