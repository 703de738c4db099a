package dev.privagg.privacy;

import java.util.Arrays;

/**
 * A privacy loss distribution on the grid {@code k * interval}: the distribution under P of the
 * loss L = log(P/Q), with {@code mass[i]} at loss {@code (offset + i) * interval} and {@code
 * infinityMass} at +infinity. Immutable once built (the arrays are never handed out).
 *
 * <p>Its delta at epsilon is {@code infinityMass + sum_k mass_k (1 - e^(epsilon - l_k))_+}, which
 * grows when any mass moves to a larger loss. Every operation here either is exact (convolution),
 * only moves mass up (truncation), or spreads a point's mass to its two neighbours on a coarser
 * grid keeping its P and its Q mass (coarsening, connect the dots), so it never lowers delta at any
 * epsilon.
 */
final class DiscretePld {
  /** Most grid points kept; beyond it the grid is coarsened (by 2) until it fits. */
  static final int MAX_POINTS = 1 << 18;

  /**
   * Above this epsilon, delta is summed term by term rather than from the suffix sums, whose
   * e^epsilon and subnormal p_k e^(-l_k) lose all precision near 709.
   */
  static final double DIRECT_ABOVE = 500;

  final double interval;
  final long offset;
  private final double[] mass;
  final double infinityMass;

  /** Rounds of the base mechanisms composed into this distribution: 1 for one round. */
  final long rounds;

  /**
   * Orders t of the moment generating function E[e^(tL)] used to bound the tails of a convolution
   * (Chernoff): +-2^(k/2) for k = -8..28, so from 1/16 to 16384 in each direction, about a factor
   * 1.4 apart, which places a cut at most a few percent beyond where the best t would.
   */
  static final double[] ORDERS = orders();

  /** Suffix sums for delta at epsilon >= 0, built on first use; null until then. */
  private volatile double[][] suffix;

  /** log E[e^(tL)] over the finite masses at each of {@link #ORDERS}, built on first use. */
  private volatile double[] logMgf;

  DiscretePld(double interval, long offset, double[] mass, double infinityMass, long rounds) {
    this.interval = interval;
    this.offset = offset;
    this.mass = mass;
    this.infinityMass = infinityMass;
    this.rounds = rounds;
  }

  int size() {
    return mass.length;
  }

  double loss(int i) {
    return (offset + i) * interval;
  }

  /** The mass at loss {@code loss(i)}. */
  double massAt(int i) {
    return mass[i];
  }

  /**
   * Pessimistic truncation and bounding of a freshly built distribution: leading mass whose total
   * is at most {@code tailMass} moves up to the lowest kept point; trailing mass whose total is at
   * most {@code tailMass} moves to +infinity (it then counts fully to delta). Then the grid is
   * coarsened until at most {@link #MAX_POINTS} points remain.
   */
  static DiscretePld truncated(
      double interval,
      long offset,
      double[] mass,
      double infinityMass,
      long rounds,
      double tailMass) {
    int lo = 0;
    double below = 0;
    while (lo < mass.length - 1 && below + mass[lo] <= tailMass) {
      below += mass[lo];
      lo++;
    }
    int hi = mass.length - 1;
    double above = 0;
    while (hi > lo && above + mass[hi] <= tailMass) {
      above += mass[hi];
      hi--;
    }
    double[] kept = Arrays.copyOfRange(mass, lo, hi + 1);
    kept[0] += below;
    DiscretePld pld =
        new DiscretePld(interval, offset + lo, kept, Math.min(1, infinityMass + above), rounds);
    while (pld.mass.length > MAX_POINTS) {
      pld = pld.coarsened();
    }
    return pld;
  }

  /**
   * This distribution on the grid of twice the interval, by connect the dots (Doroshenko et al.
   * 2022): a point between two points of the new grid, at loss l with new neighbours l - h and l +
   * h, sends the fraction w = 1 / (1 + e^(-h)) of its mass up and the rest down, which keeps both
   * its P mass (w + (1 - w) = 1) and its Q mass (w e^(-l-h) + (1 - w) e^(-l+h) = e^(-l)). Seen from
   * Q this spreads the likelihood ratio to two values with the same mean, so E_Q[(P/Q - e^eps)_+]
   * can only grow (Jensen): the result dominates this distribution at every epsilon, and the error
   * is second order in h, where rounding every loss up shifted the distribution by h/2 on average
   * and that shift doubled at every later squaring.
   */
  DiscretePld coarsened() {
    long newOffset = Math.floorDiv(offset, 2);
    long newLast = Math.floorDiv(offset + mass.length, 2);
    double[] merged = new double[(int) (newLast - newOffset + 1)];
    double up = 1 / (1 + StrictMath.exp(-interval));
    for (int i = 0; i < mass.length; i++) {
      long k = offset + i;
      int j = (int) (Math.floorDiv(k, 2) - newOffset);
      if ((k & 1) == 0) {
        merged[j] += mass[i];
      } else {
        double toUpper = mass[i] * up;
        merged[j + 1] += toUpper;
        merged[j] += mass[i] - toUpper;
      }
    }
    return new DiscretePld(2 * interval, newOffset, merged, infinityMass, rounds);
  }

  /** This distribution on a grid of {@code target} >= interval (interval times a power of 2). */
  DiscretePld onInterval(double target) {
    DiscretePld pld = this;
    while (pld.interval < target) {
      pld = pld.coarsened();
    }
    return pld;
  }

  /**
   * The distribution of the sum of independent losses (the PLD of the composed mechanism),
   * truncated pessimistically. Both are brought to the coarser of the two grids first. The infinity
   * masses compose as 1 - (1 - a)(1 - b).
   *
   * <p>With {@code tailMass = tailMassPerRound * rounds} of the result, the tails are cut where a
   * Chernoff bound from the two operands' moment generating functions (whose product is that of the
   * exact convolution) leaves at most {@code tailMass} beyond the cut on each side, as
   * dp_accounting bounds the support of a self-composition: the bound at the cut is added to the
   * infinity mass for the upper tail, and the larger of the bound and the FFT's mass below the cut
   * moves up to the lowest kept point for the lower tail. Cutting by the FFT's own tail sums alone
   * did not shrink the support: its round-off leaves 1e-20 to 1e-19 in entries far beyond the true
   * support, which over 10^5 entries add up to more than the tail mass, so every squaring doubled
   * the width and the grid was coarsened early (q = 0.001, z = 0.5: from 4 rounds on, to a 256
   * times wider interval at 10,000 rounds). {@link #truncated} then trims what the FFT's tail sums
   * allow.
   */
  DiscretePld compose(DiscretePld other, double tailMassPerRound) {
    long rounds = this.rounds + other.rounds;
    double tailMass = tailMassPerRound * rounds;
    double common = Math.max(interval, other.interval);
    DiscretePld a = onInterval(common);
    DiscretePld b = other.onInterval(common);
    double[] logMgf = a.logMgf().clone();
    double[] logMgfB = b.logMgf();
    for (int j = 0; j < logMgf.length; j++) {
      logMgf[j] += logMgfB[j];
    }
    double[] convolved = Fft.convolve(a.mass, b.mass);
    double inf = a.infinityMass + b.infinityMass - a.infinityMass * b.infinityMass;
    long offset = a.offset + b.offset;
    int lo = 0;
    int hi = convolved.length - 1;
    double movedUp = 0;
    if (tailMass > 0) {
      double logTail = StrictMath.log(tailMass);
      double upperCut = Double.POSITIVE_INFINITY;
      double lowerCut = Double.NEGATIVE_INFINITY;
      for (int j = 0; j < ORDERS.length; j++) {
        double t = ORDERS[j];
        // P(L >= u) <= E[e^(tL)] e^(-tu) for t > 0, P(L <= u) <= E[e^(tL)] e^(-tu) for t < 0
        double u = (logMgf[j] - logTail) / t;
        if (t > 0 && u < upperCut) {
          upperCut = u;
        } else if (t < 0 && u > lowerCut) {
          lowerCut = u;
        }
      }
      // keep indices up to the first grid point at or above upperCut
      double top = Math.ceil(upperCut / common) - offset;
      if (top < hi) {
        hi = (int) Math.max(0, top);
        inf += chernoff(logMgf, (offset + hi + 1) * common, true);
      }
      // keep indices from the last grid point at or below lowerCut
      double bottom = Math.floor(lowerCut / common) - offset;
      if (bottom > 0) {
        lo = (int) Math.min(hi, bottom);
        double below = 0;
        for (int i = 0; i < lo; i++) {
          below += convolved[i];
        }
        movedUp = Math.max(below, chernoff(logMgf, (offset + lo - 1) * common, false));
      }
    }
    double[] kept =
        lo == 0 && hi == convolved.length - 1
            ? convolved
            : Arrays.copyOfRange(convolved, lo, hi + 1);
    kept[0] += movedUp;
    return truncated(common, offset + lo, kept, Math.min(1, inf), rounds, tailMass);
  }

  /** The Chernoff bound on P(L >= u) ({@code upper}) or P(L <= u) from the log-MGF at ORDERS. */
  private static double chernoff(double[] logMgf, double u, boolean upper) {
    double best = 0; // log of the trivial bound 1
    for (int j = 0; j < ORDERS.length; j++) {
      double t = ORDERS[j];
      if ((t > 0) == upper) {
        best = Math.min(best, logMgf[j] - t * u);
      }
    }
    return StrictMath.exp(best);
  }

  private static double[] orders() {
    int count = 37;
    double[] orders = new double[2 * count];
    for (int k = 0; k < count; k++) {
      double t = StrictMath.pow(2, (k - 8) / 2.0);
      orders[k] = t;
      orders[count + k] = -t;
    }
    return orders;
  }

  /**
   * log sum_k p_k e^(t l_k) at each of {@link #ORDERS}, by Horner's rule from the far end (for t >
   * 0 relative to the highest non-zero point, for t < 0 to the lowest), so nothing overflows. Every
   * order is advanced in the same pass over the masses. Terms that underflow are below 1e-308 each,
   * and n of them at most are added back, so the result never falls below the true value beyond
   * round-off. All masses 0 give -infinity.
   */
  double[] logMgf() {
    double[] result = logMgf;
    if (result != null) {
      return result;
    }
    int top = mass.length - 1;
    while (top > 0 && mass[top] == 0) {
      top--;
    }
    int bottom = 0;
    while (bottom < top && mass[bottom] == 0) {
      bottom++;
    }
    int half = ORDERS.length / 2;
    double[] ratio = new double[ORDERS.length];
    for (int j = 0; j < ORDERS.length; j++) {
      ratio[j] = StrictMath.exp(-Math.abs(ORDERS[j]) * interval);
    }
    double[] sums = new double[ORDERS.length];
    for (int i = bottom; i <= top; i++) { // positive orders: sum_k p_k e^(-t (l_top - l_k))
      double p = mass[i];
      for (int j = 0; j < half; j++) {
        sums[j] = sums[j] * ratio[j] + p;
      }
    }
    for (int i = top; i >= bottom; i--) { // negative orders: sum_k p_k e^(t (l_k - l_bottom))
      double p = mass[i];
      for (int j = half; j < ORDERS.length; j++) {
        sums[j] = sums[j] * ratio[j] + p;
      }
    }
    double floor = (top - bottom + 1) * Double.MIN_NORMAL;
    result = new double[ORDERS.length];
    for (int j = 0; j < ORDERS.length; j++) {
      double anchor = ORDERS[j] > 0 ? loss(top) : loss(bottom);
      double sum = sums[j] > 0 ? sums[j] + floor : 0;
      result[j] = StrictMath.log(sum) + ORDERS[j] * anchor;
    }
    logMgf = result;
    return result;
  }

  /**
   * delta at {@code epsilon} >= 0: infinityMass + sum over l_k > epsilon of p_k (1 - e^(eps -
   * l_k)).
   */
  double delta(double epsilon) {
    int first = firstAbove(epsilon);
    if (first >= mass.length) {
      return infinityMass;
    }
    if (epsilon > DIRECT_ABOVE) {
      // e^epsilon overflows past 709.78 (Infinity times a positive suffix reads as delta 0, times
      // an underflowed one as NaN), and p_k e^(-l_k) is subnormal past 708: sum p_k (1 - e^(eps -
      // l_k)) term by term instead, every factor then in [0, 1].
      double value = infinityMass;
      for (int i = first; i < mass.length; i++) {
        value += mass[i] * -StrictMath.expm1(epsilon - loss(i));
      }
      return Math.min(1, value);
    }
    double[][] sums = suffixSums();
    double[] massAbove = sums[0];
    double[] weightedAbove = sums[1];
    double value = infinityMass + massAbove[first] - StrictMath.exp(epsilon) * weightedAbove[first];
    return Math.min(1, Math.max(infinityMass, value));
  }

  /**
   * The smallest epsilon >= 0 with delta(epsilon) <= target; +infinity when the infinity mass alone
   * exceeds it. A binary search over the grid finds the piece where delta crosses the target; on
   * that piece delta is A - e^eps B in closed form, whose root starts a bisection over the doubles
   * of the piece: the answer is the smallest double found there whose computed delta is at most the
   * target, so it is on the safe side of the crossing and within an ulp or so of it.
   */
  double epsilon(double target) {
    if (infinityMass > target) {
      return Double.POSITIVE_INFINITY;
    }
    if (delta(0) <= target) {
      return 0;
    }
    // delta(loss(i)) is non-increasing in i; find the first grid point >= 0 where it fits.
    int lo = firstAbove(0);
    int hi = mass.length - 1; // delta(loss(last)) = infinityMass <= target
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (delta(loss(mid)) <= target) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    // delta(fails) > target >= delta(fits), both in [max(0, loss(hi - 1)), loss(hi)]
    double fits = loss(hi);
    double fails = hi == 0 ? 0 : Math.max(0, loss(hi - 1));
    double[][] sums = suffixSums();
    double a = infinityMass + sums[0][hi] - target;
    double b = sums[1][hi];
    double root = b > 0 && a > 0 ? StrictMath.log(a / b) : Double.NaN;
    if (root > fails && root < fits) {
      if (delta(root) <= target) {
        fits = root;
      } else {
        fails = root;
      }
    }
    // Bisect on the bit patterns, which order non-negative doubles: about 60 steps at most.
    long failBits = Double.doubleToRawLongBits(fails);
    long fitBits = Double.doubleToRawLongBits(fits);
    while (fitBits - failBits > 1) {
      long midBits = failBits + (fitBits - failBits) / 2;
      if (delta(Double.longBitsToDouble(midBits)) <= target) {
        fitBits = midBits;
      } else {
        failBits = midBits;
      }
    }
    return Double.longBitsToDouble(fitBits);
  }

  /** Index of the first grid point with loss > epsilon (mass.length when none). */
  private int firstAbove(double epsilon) {
    double k = Math.floor(epsilon / interval) + 1 - offset;
    if (k <= 0) {
      return 0;
    }
    int i = k >= mass.length ? mass.length : (int) k;
    while (i > 0 && loss(i - 1) > epsilon) {
      i--;
    }
    while (i < mass.length && loss(i) <= epsilon) {
      i++;
    }
    return i;
  }

  /**
   * Sums from the top of p_k and p_k e^(-l_k) over grid points with loss > 0 (entries below are
   * left 0: delta is only asked at epsilon >= 0, where e^(-l_k) <= 1 cannot overflow).
   */
  private double[][] suffixSums() {
    double[][] sums = suffix;
    if (sums == null) {
      double[] massAbove = new double[mass.length + 1];
      double[] weightedAbove = new double[mass.length + 1];
      for (int i = mass.length - 1; i >= 0 && loss(i) > 0; i--) {
        massAbove[i] = massAbove[i + 1] + mass[i];
        weightedAbove[i] = weightedAbove[i + 1] + mass[i] * StrictMath.exp(-loss(i));
      }
      sums = new double[][] {massAbove, weightedAbove};
      suffix = sums;
    }
    return sums;
  }
}
