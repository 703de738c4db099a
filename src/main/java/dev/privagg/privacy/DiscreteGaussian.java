package dev.privagg.privacy;

import java.math.BigInteger;
import java.util.random.RandomGenerator;

/**
 * The discrete Gaussian N_Z(0, sigma^2) on the integers, P[x] proportional to exp(-x^2 / (2
 * sigma^2)), sampled exactly: Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential
 * Privacy" (NeurIPS 2020), Algorithm 3 (rejection from a discrete Laplace, Algorithm 2, built on
 * Bernoulli(exp(-gamma)) draws, Algorithm 1). Every decision compares uniform integers with exact
 * rationals; no floating point enters it, since its rounding leaks (Mironov 2012).
 *
 * <p>sigma^2 is the rational {@code numerator / denominator}. Planning rounds a variance up to such
 * a rational ({@link #withVarianceAtLeast}), so noise never falls short of what the accountant
 * assumed.
 */
public final class DiscreteGaussian {
  /** Denominator of the variances {@link #withVarianceAtLeast} makes: 2^-20 resolution. */
  static final long PLANNED_DENOMINATOR = 1L << 20;

  private final long numerator;
  private final long denominator;

  /** floor(sigma) + 1: the discrete Laplace's scale. */
  private final long scale;

  private final BigInteger rejectionDenominator;

  private DiscreteGaussian(long numerator, long denominator) {
    if (numerator < 1 || denominator < 1 || numerator > (1L << 62)) {
      throw new IllegalArgumentException(
          "variance must be a positive rational numerator / denominator with numerator <= 2^62,"
              + " was "
              + numerator
              + " / "
              + denominator);
    }
    this.numerator = numerator;
    this.denominator = denominator;
    this.scale = floorSqrt(numerator, denominator) + 1;
    BigInteger t = BigInteger.valueOf(scale);
    // (|y| - sigma^2 / t)^2 / (2 sigma^2) = (|y| t den - num)^2 / (2 num t^2 den)
    this.rejectionDenominator =
        BigInteger.TWO
            .multiply(BigInteger.valueOf(numerator))
            .multiply(t)
            .multiply(t)
            .multiply(BigInteger.valueOf(denominator));
  }

  /** N_Z(0, numerator / denominator). */
  public static DiscreteGaussian ofVariance(long numerator, long denominator) {
    return new DiscreteGaussian(numerator, denominator);
  }

  /**
   * The discrete Gaussian whose sigma^2 is the smallest multiple of 2^-20 at or above {@code
   * variance}.
   */
  public static DiscreteGaussian withVarianceAtLeast(double variance) {
    if (!(variance > 0 && variance <= 0x1p40)) {
      throw new IllegalArgumentException("variance must be > 0 and <= 2^40, was " + variance);
    }
    double scaled = Math.ceil(variance * PLANNED_DENOMINATOR);
    return new DiscreteGaussian((long) scaled, PLANNED_DENOMINATOR);
  }

  /** sigma^2 as a double (the exact value is {@link #varianceNumerator} / denominator). */
  public double sigmaSquared() {
    return (double) numerator / denominator;
  }

  public long varianceNumerator() {
    return numerator;
  }

  public long varianceDenominator() {
    return denominator;
  }

  /** One draw of N_Z(0, sigma^2). */
  public long sample(RandomGenerator random) {
    BigInteger t = BigInteger.valueOf(scale);
    BigInteger tDen = t.multiply(BigInteger.valueOf(denominator));
    BigInteger num = BigInteger.valueOf(numerator);
    while (true) {
      long y = discreteLaplace(scale, random);
      BigInteger gap = BigInteger.valueOf(Math.abs(y)).multiply(tDen).subtract(num);
      if (bernoulliExpMinus(gap.multiply(gap), rejectionDenominator, random)) {
        return y;
      }
    }
  }

  /** Fills {@code out} with independent draws. */
  public void sample(long[] out, RandomGenerator random) {
    for (int i = 0; i < out.length; i++) {
      out[i] = sample(random);
    }
  }

  /** The discrete Laplace with scale t: P[x] proportional to exp(-|x| / t) (CKS20 Algorithm 2). */
  static long discreteLaplace(long t, RandomGenerator random) {
    while (true) {
      long u = random.nextLong(t);
      if (!bernoulliExpMinusAtMostOne(u, t, random)) {
        continue;
      }
      long v = 0;
      while (bernoulliExpMinusAtMostOne(1, 1, random)) {
        v++;
      }
      long x = Math.addExact(u, Math.multiplyExact(t, v));
      boolean negative = random.nextBoolean();
      if (negative && x == 0) {
        continue;
      }
      return negative ? -x : x;
    }
  }

  /** Bernoulli(exp(-n / d)) for n / d >= 0 (CKS20 Algorithm 1, with the integer part peeled). */
  static boolean bernoulliExpMinus(BigInteger n, BigInteger d, RandomGenerator random) {
    BigInteger[] split = n.divideAndRemainder(d);
    for (BigInteger i = BigInteger.ZERO; i.compareTo(split[0]) < 0; i = i.add(BigInteger.ONE)) {
      if (!bernoulliExpMinusAtMostOne(1, 1, random)) {
        return false;
      }
    }
    BigInteger remainder = split[1];
    if (d.bitLength() < 56) {
      return bernoulliExpMinusAtMostOne(remainder.longValueExact(), d.longValueExact(), random);
    }
    int k = 1;
    while (uniformBelow(d.multiply(BigInteger.valueOf(k)), random).compareTo(remainder) < 0) {
      k++;
    }
    return (k & 1) == 1;
  }

  /**
   * Bernoulli(exp(-n / d)) for 0 <= n <= d: K is the first k with Bernoulli(gamma / k) = 0, and P[K
   * odd] = exp(-gamma). d stays below 2^56 so that d k fits a long for any k a run reaches.
   */
  static boolean bernoulliExpMinusAtMostOne(long n, long d, RandomGenerator random) {
    long k = 1;
    while (random.nextLong(Math.multiplyExact(d, k)) < n) {
      k++;
    }
    return (k & 1) == 1;
  }

  /** A uniform integer in [0, bound), by rejection from bitLength random bits. */
  private static BigInteger uniformBelow(BigInteger bound, RandomGenerator random) {
    int bits = bound.bitLength();
    byte[] bytes = new byte[(bits + 7) / 8 + 1];
    while (true) {
      random.nextBytes(bytes);
      bytes[0] = 0; // non-negative
      BigInteger candidate = new BigInteger(bytes);
      int excess = 8 * (bytes.length - 1) - bits;
      candidate = candidate.shiftRight(excess);
      if (candidate.compareTo(bound) < 0) {
        return candidate;
      }
    }
  }

  /** floor(sqrt(num / den)), exactly. */
  private static long floorSqrt(long num, long den) {
    BigInteger n = BigInteger.valueOf(num);
    BigInteger d = BigInteger.valueOf(den);
    long s = (long) Math.floor(Math.sqrt((double) num / den));
    // Correct the floating-point guess: s^2 den <= num < (s + 1)^2 den.
    while (s > 0 && BigInteger.valueOf(s).pow(2).multiply(d).compareTo(n) > 0) {
      s--;
    }
    while (BigInteger.valueOf(s + 1).pow(2).multiply(d).compareTo(n) <= 0) {
      s++;
    }
    return s;
  }

  @Override
  public String toString() {
    return "N_Z(0, " + numerator + "/" + denominator + ")";
  }
}
