package dev.privagg.privacy;

import java.util.Arrays;

/**
 * A privacy loss distribution on the grid {@code k * interval}: the distribution under P of the
 * loss L = log(P/Q), with {@code mass[i]} at loss {@code (offset + i) * interval} and {@code
 * infinityMass} at +infinity. Immutable once built (the arrays are never handed out).
 *
 * <p>Its delta at epsilon is {@code infinityMass + sum_k mass_k (1 - e^(epsilon - l_k))_+}, which
 * grows when any mass moves to a larger loss. Every operation here either is exact (convolution) or
 * only moves mass up (truncation, coarsening), so it never lowers delta at any epsilon.
 */
final class DiscretePld {
  /** Most grid points kept; beyond it the grid is coarsened (by 2, rounding up) until it fits. */
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

  /** Suffix sums for delta at epsilon >= 0, built on first use; null until then. */
  private volatile double[][] suffix;

  DiscretePld(double interval, long offset, double[] mass, double infinityMass) {
    this.interval = interval;
    this.offset = offset;
    this.mass = mass;
    this.infinityMass = infinityMass;
  }

  int size() {
    return mass.length;
  }

  double loss(int i) {
    return (offset + i) * interval;
  }

  /**
   * Pessimistic truncation and bounding of a freshly built distribution: leading mass whose total
   * is at most {@code tailMass} moves up to the lowest kept point; trailing mass whose total is at
   * most {@code tailMass} moves to +infinity (it then counts fully to delta). Then the grid is
   * coarsened, rounding every loss up, until at most {@link #MAX_POINTS} points remain.
   */
  static DiscretePld truncated(
      double interval, long offset, double[] mass, double infinityMass, double tailMass) {
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
        new DiscretePld(interval, offset + lo, kept, Math.min(1, infinityMass + above));
    while (pld.mass.length > MAX_POINTS) {
      pld = pld.coarsened();
    }
    return pld;
  }

  /** The same distribution on the grid of twice the interval, every loss rounded up. */
  DiscretePld coarsened() {
    long newOffset = Math.floorDiv(offset + 1, 2);
    long newLast = Math.floorDiv(offset + mass.length, 2);
    double[] merged = new double[(int) (newLast - newOffset + 1)];
    for (int i = 0; i < mass.length; i++) {
      merged[(int) (Math.floorDiv(offset + i + 1, 2) - newOffset)] += mass[i];
    }
    return new DiscretePld(2 * interval, newOffset, merged, infinityMass);
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
   */
  DiscretePld compose(DiscretePld other, double tailMass) {
    double common = Math.max(interval, other.interval);
    DiscretePld a = onInterval(common);
    DiscretePld b = other.onInterval(common);
    double[] convolved = Fft.convolve(a.mass, b.mass);
    double inf = a.infinityMass + b.infinityMass - a.infinityMass * b.infinityMass;
    return truncated(common, a.offset + b.offset, convolved, inf, tailMass);
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
