package dev.privagg.secagg;

import java.util.random.RandomGenerator;

/**
 * A client's update on the protocol's fixed-point grid: units of {@code C * 2^-36}, as signed
 * 64-bit integers (their sum is taken modulo 2^64, exact while it fits).
 *
 * <p>The update is clipped to L2 norm {@code C' = C (1 - sqrt(d) 2^-36)}, each value v becomes
 * {@code a = v 2^36 / C}, and a is rounded to {@code floor(a) + 1} with probability {@code a -
 * floor(a)}, else to {@code floor(a)}: unbiased, and each coordinate moves by less than one unit,
 * so the result's norm is below {@code ||a|| + sqrt(d) <= 2^36} units, i.e. at most C. The sum's
 * sensitivity is therefore C, as in plaintext mode.
 *
 * <p>Floating point: the norm and the scaled values carry relative rounding errors of at most about
 * {@code (d + 16) 2^-53}, so the target norm is shrunk by {@code (d + 16) 2^-50} more (for d = 10^6
 * about 10^-9 of C), which keeps {@code ||a|| <= 2^36 - sqrt(d)} exactly, not just nearly. A value
 * already on the grid and within the norm passes unchanged.
 */
public final class Quantizer {
  /** Fractional bits of the grid: a unit is {@code C * 2^-36}. */
  public static final int FRACTION_BITS = 36;

  private static final double UNITS_AT_NORM = 0x1p36;

  /** Above this, {@code v * 2^36} could overflow for an unclipped v (|v| <= C). */
  private static final double MAX_CLIP_NORM = 0x1p900;

  private final double clipNorm;

  /**
   * @param clipNorm C, the job's {@code privacy.clipNorm}
   */
  public Quantizer(double clipNorm) {
    if (!(clipNorm > 0 && clipNorm <= MAX_CLIP_NORM)) {
      throw new IllegalArgumentException("clipNorm must be > 0 and <= 2^900, was " + clipNorm);
    }
    this.clipNorm = clipNorm;
  }

  /** Quantizes an update given as tensors, flattened in their order. */
  public long[] quantize(float[][] update, RandomGenerator random) {
    return quantize(flatten(update), random);
  }

  /** The tensors' values in one vector, tensor after tensor: what clients clip and mask. */
  public static double[] flatten(float[][] tensors) {
    int d = 0;
    for (float[] tensor : tensors) {
      d += tensor.length;
    }
    double[] flat = new double[d];
    int at = 0;
    for (float[] tensor : tensors) {
      for (float value : tensor) {
        flat[at++] = value;
      }
    }
    return flat;
  }

  /**
   * Clips, scales and rounds {@code update}.
   *
   * @param random the rounding's coins: a CSPRNG in a client, seeded in tests
   * @throws IllegalArgumentException if a value is NaN or infinite
   */
  public long[] quantize(double[] update, RandomGenerator random) {
    int d = update.length;
    double maxAbs = 0;
    for (int j = 0; j < d; j++) {
      if (!Double.isFinite(update[j])) {
        throw new IllegalArgumentException("update[" + j + "] must be finite, was " + update[j]);
      }
      maxAbs = Math.max(maxAbs, Math.abs(update[j]));
    }
    long[] units = new long[d];
    if (maxAbs == 0) {
      return units;
    }
    double norm = norm(update, maxAbs);
    double limit = (UNITS_AT_NORM - Math.sqrt(d)) * (1 - (d + 16) * 0x1p-50);
    boolean clip = !(norm * (UNITS_AT_NORM / clipNorm) <= limit);
    double unitsPerValue = limit / norm;
    Coins coins = new Coins(random);
    for (int j = 0; j < d; j++) {
      // Unclipped values scale as v 2^36 / C, exact for a value on the grid.
      double a = clip ? update[j] * unitsPerValue : update[j] * UNITS_AT_NORM / clipNorm;
      double floor = Math.floor(a);
      units[j] = (long) floor + (coins.next() < a - floor ? 1 : 0);
    }
    return units;
  }

  /**
   * Uniform doubles in [0, 1) for the rounding, one per coordinate: 53 bits of each word of an
   * AES-CTR keystream ({@link MaskStream}) under a key drawn from {@code random}, in blocks. One
   * draw from a JDK SecureRandom per coordinate took 150 ns, 90% of a client's time at d = 10^6;
   * the keystream is as unpredictable to the job and a few hundred times faster.
   */
  private static final class Coins {
    private static final int BLOCK = 8192;
    private final MaskStream stream;
    private final long[] words = new long[BLOCK];
    private int next = BLOCK;
    private int offset;

    Coins(RandomGenerator random) {
      byte[] key = new byte[32];
      random.nextBytes(key);
      stream = new MaskStream(key);
    }

    double next() {
      if (next == BLOCK) {
        java.util.Arrays.fill(words, 0);
        stream.addTo(words, offset, offset + BLOCK, 1);
        offset += BLOCK;
        next = 0;
      }
      return (words[next++] >>> 11) * 0x1p-53;
    }
  }

  /** The L2 norm, scaled by the largest magnitude so that squares neither overflow nor vanish. */
  public static double norm(double[] update, double maxAbs) {
    double sum = 0;
    for (double value : update) {
      double scaled = value / maxAbs;
      sum += scaled * scaled;
    }
    return maxAbs * Math.sqrt(sum);
  }
}
