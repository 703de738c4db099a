package dev.privagg.distributed;

import dev.privagg.privacy.DiscreteGaussian;
import dev.privagg.privacy.DistributedDiscreteGaussian;
import dev.privagg.secagg.RandomizedHadamard;

/**
 * How clients put an update and their noise share on the integer grid of {@code bits}-bit words,
 * for the distributed discrete Gaussian (Kairouz, Liu, Steinke, ICML 2021, Algorithm 1 and Section
 * 4): an update clipped to C is scaled so that C is {@code unitsPerClipNorm} grid units, rotated
 * ({@link RandomizedHadamard}, to the padded dimension p), rounded with conditional randomized
 * rounding (redrawn until its squared norm is at most {@code maxSquaredNorm}, so the sensitivity
 * holds exactly on the integers), given a share of N_Z(0, sigma^2) per coordinate, and reduced
 * modulo 2^bits.
 *
 * <p><b>Privacy.</b> The sum of the {@code noiseShares} honest shares (the fewest a round may
 * unmask with) has variance {@code noiseShares sigma^2 >= (z sqrt(maxSquaredNorm))^2}; KLS21's
 * bound for it is charged as the Gaussian of {@link #noiseMultiplier} ({@link
 * DistributedDiscreteGaussian#dominatingNoiseMultiplier}), never below the requested z. More shares
 * only add noise. The modular reduction is post-processing of the noisy sum: it never costs
 * privacy.
 *
 * <p><b>Wrap-around.</b> A coordinate of the sum of at most {@code maxInputs} inputs is decoded
 * wrongly only if it leaves [-2^(bits-1), 2^(bits-1)). Its three parts: the rotated sum of the
 * unrounded vectors (sub-Gaussian with variance proxy (maxInputs c)^2 / p under the random signs,
 * Hoeffding, for inputs chosen independently of the round's signs), the rounding errors (each below
 * 1, so below maxInputs together), and the noise (a discrete Gaussian is sigma^2-sub-Gaussian,
 * CKS20 Corollary 9). With s1 and s2 the two sub-Gaussian scales and R = 2^(bits-1) - 1 -
 * maxInputs, a union bound over the p coordinates gives {@code P[wrap] <= 4 p exp(-R^2 / (2 (s1 +
 * s2)^2))}. The plan takes the largest grid whose bound is at most {@link #WRAP_TARGET}.
 *
 * <p>The planning arithmetic uses {@code StrictMath}, so that every JVM that reads a spec reaches
 * the same plan: a round records its plan, and a restore under another one ends it without a sum.
 */
public record DistributedNoisePlan(
    int bits,
    int dimension,
    int paddedDimension,
    double unitsPerClipNorm,
    long maxSquaredNorm,
    long varianceNumerator,
    long varianceDenominator,
    int noiseShares,
    long maxInputs,
    double noiseMultiplier,
    double wrapProbability)
    implements java.io.Serializable {

  /** Word sizes a plan allows; FL deployments use 16 to 20. */
  public static final int MIN_BITS = 8;

  public static final int MAX_BITS = 32;

  /** The wrap-around probability a plan stays within, per round: 2^-30. */
  public static final double WRAP_TARGET = 0x1p-30;

  /** KLS21's beta for conditional randomized rounding, e^-1/2 (their experiments' choice). */
  public static final double ROUNDING_BETA = StrictMath.exp(-0.5);

  /** The grid stops at 2^30 units per C, so that squared norms stay far inside a long. */
  public static final double MAX_UNITS_PER_CLIP_NORM = 0x1p30;

  public DistributedNoisePlan {
    if (bits < MIN_BITS || bits > MAX_BITS) {
      throw new IllegalArgumentException(
          "bits must be in [" + MIN_BITS + ", " + MAX_BITS + "], was " + bits);
    }
    if (paddedDimension != RandomizedHadamard.paddedDimension(dimension)) {
      throw new IllegalArgumentException(
          "paddedDimension must be the power of two at or above "
              + dimension
              + ", was "
              + paddedDimension);
    }
    if (!(unitsPerClipNorm >= 1 && unitsPerClipNorm <= MAX_UNITS_PER_CLIP_NORM)) {
      throw new IllegalArgumentException(
          "unitsPerClipNorm must be in [1, 2^30], was " + unitsPerClipNorm);
    }
    if (maxSquaredNorm < 1) {
      throw new IllegalArgumentException("maxSquaredNorm must be >= 1, was " + maxSquaredNorm);
    }
    if (noiseShares < 1 || maxInputs < noiseShares) {
      throw new IllegalArgumentException(
          "noiseShares must be >= 1 and at most maxInputs, were "
              + noiseShares
              + " and "
              + maxInputs);
    }
    DiscreteGaussian.ofVariance(varianceNumerator, varianceDenominator); // validates
  }

  /**
   * The plan for a target noise multiplier z (the sum's noise std over its sensitivity, both in
   * grid units), or an exception saying which spec value to change.
   *
   * @param noiseShares the fewest honest noise shares an unmasked sum holds
   * @param maxInputs the most masked inputs a round sums (rounds.maxClients)
   */
  public static DistributedNoisePlan plan(
      double z, int dimension, int bits, int noiseShares, long maxInputs) {
    if (!(z > 0 && Double.isFinite(z))) {
      throw new IllegalArgumentException("noise multiplier must be > 0 and finite, was " + z);
    }
    if (bits < MIN_BITS || bits > MAX_BITS) {
      throw new IllegalArgumentException(
          "aggregation.bitsPerCoordinate must be in ["
              + MIN_BITS
              + ", "
              + MAX_BITS
              + "], was "
              + bits);
    }
    if (noiseShares < 1 || maxInputs < noiseShares) {
      throw new IllegalArgumentException(
          "the fewest noise shares must be >= 1 and at most rounds.maxClients, were "
              + noiseShares
              + " and "
              + maxInputs);
    }
    DistributedNoisePlan smallest;
    try {
      smallest = at(1, z, dimension, bits, noiseShares, maxInputs);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "noise multiplier "
              + z
              + " needs noise shares beyond the exact sampler's range even on the coarsest grid ("
              + e.getMessage()
              + "): lower privacy.noiseMultiplier or raise the fewest honest inputs"
              + " (rounds.minimumCohort.count)",
          e);
    }
    if (!(smallest.wrapProbability <= WRAP_TARGET)) {
      throw new IllegalArgumentException(
          bits
              + "-bit words cannot hold the sum of rounds.maxClients = "
              + maxInputs
              + " inputs and their noise without wrapping (probability "
              + smallest.wrapProbability
              + " at the coarsest grid, the limit is 2^-30): raise aggregation.bitsPerCoordinate or lower"
              + " rounds.maxClients");
    }
    // The wrap bound grows with the grid; bisect log2(units per C) for the finest that fits.
    double lo = 0;
    double hi = Math.min(bits, 30);
    DistributedNoisePlan best = smallest;
    for (int i = 0; i < 60; i++) {
      double mid = (lo + hi) / 2;
      DistributedNoisePlan candidate;
      try {
        candidate = at(StrictMath.pow(2, mid), z, dimension, bits, noiseShares, maxInputs);
      } catch (IllegalArgumentException e) {
        // Shares this fine a grid needs lie beyond the sampler's variance range: too fine.
        hi = mid;
        continue;
      }
      if (candidate.wrapProbability <= WRAP_TARGET) {
        lo = mid;
        best = candidate;
      } else {
        hi = mid;
      }
    }
    return best;
  }

  /** The plan at grid c (units per C), with its wrap bound. */
  static DistributedNoisePlan at(
      double c, double z, int dimension, int bits, int noiseShares, long maxInputs) {
    int padded = RandomizedHadamard.paddedDimension(dimension);
    double room = Math.scalb(1.0, bits - 1) - 1 - maxInputs;
    long maxSquaredNorm = (long) Math.floor(roundedSquaredBound(c, padded));
    DiscreteGaussian share = shareFor(z, maxSquaredNorm, noiseShares, padded);
    double sigmaSquared = share.sigmaSquared();
    double charged =
        DistributedDiscreteGaussian.dominatingNoiseMultiplier(
            Math.sqrt(maxSquaredNorm), sigmaSquared, noiseShares, padded);
    double signal = maxInputs * c / Math.sqrt(padded);
    double noise = Math.sqrt(maxInputs * sigmaSquared);
    double wrap =
        room <= 0
            ? 1
            : Math.min(
                1,
                4.0
                    * padded
                    * StrictMath.exp(-room * room / (2 * (signal + noise) * (signal + noise))));
    return new DistributedNoisePlan(
        bits,
        dimension,
        padded,
        c,
        maxSquaredNorm,
        share.varianceNumerator(),
        share.varianceDenominator(),
        noiseShares,
        maxInputs,
        charged,
        wrap);
  }

  /**
   * The share's variance: at least (z B)^2 / n, raised until the charged Gaussian's multiplier is
   * at least z (KLS21's tau lowers it below sqrt(n) sigma / B for small sigma).
   */
  private static DiscreteGaussian shareFor(double z, long maxSquaredNorm, int n, int padded) {
    double variance =
        Math.max(DistributedDiscreteGaussian.MIN_SIGMA_SQUARED, z * z * maxSquaredNorm / n);
    for (int i = 0; i < 64; i++) {
      DiscreteGaussian share = DiscreteGaussian.withVarianceAtLeast(variance);
      double charged =
          DistributedDiscreteGaussian.dominatingNoiseMultiplier(
              Math.sqrt(maxSquaredNorm), share.sigmaSquared(), n, padded);
      if (charged >= z) {
        return share;
      }
      variance = share.sigmaSquared() * Math.max(1 + 1e-9, (z / charged) * (z / charged));
    }
    throw new IllegalArgumentException(
        "no noise share reaches noise multiplier " + z + " (KLS21's tau term does not shrink)");
  }

  /**
   * KLS21 (Theorem 1, conditional randomized rounding): a vector of norm at most c rounds to one of
   * squared norm at most {@code c^2 + p/4 + sqrt(2 ln(1/beta)) (c + sqrt(p)/2)} with probability at
   * least 1 - beta; never more than (c + sqrt(p))^2.
   */
  public static double roundedSquaredBound(double c, int padded) {
    double root = Math.sqrt(padded);
    double conditional =
        c * c + padded / 4.0 + Math.sqrt(2 * StrictMath.log(1 / ROUNDING_BETA)) * (c + root / 2);
    return Math.min(conditional, (c + root) * (c + root));
  }

  /** The discrete Gaussian each client adds per coordinate. */
  public DiscreteGaussian share() {
    return DiscreteGaussian.ofVariance(varianceNumerator, varianceDenominator);
  }

  /** 2^bits - 1: the low bits a word keeps. */
  public long wordMask() {
    return bits == 64 ? -1L : (1L << bits) - 1;
  }

  /** Bytes of one masked input: p words of {@code bits} bits, packed. */
  public long maskedInputBytes() {
    return ((long) paddedDimension * bits + 7) / 8;
  }
}
