package dev.privagg.secagg;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The random rotation of the distributed discrete Gaussian (KLS21 Section 4.2): x of length d,
 * padded with zeros to the next power of two p, becomes {@code H D x / sqrt(p)}, H the Walsh-
 * Hadamard matrix and D a diagonal of random signs. It is orthonormal, so norms are kept, and it
 * spreads any vector over all p coordinates, so no coordinate of the sum wraps the small words.
 *
 * <p>The signs are public and the same for every client of a round: sign j is + when bit 0 of word
 * j of the {@link MaskStream} under {@code SHA-256(lp("privagg-ddg-rotation-v1") || lp(jobId) ||
 * u64(round))} is 0. The job inverts the rotation on the unmasked sum with the same signs; they
 * need not be secret, nor new when a restored job runs a round again.
 */
public final class RandomizedHadamard {
  static final String LABEL = "privagg-ddg-rotation-v1";

  private final int padded;
  private final boolean[] negative;

  /** The rotation of a job's round for vectors of length {@code dimension}. */
  public RandomizedHadamard(String jobId, long round, int dimension) {
    this.padded = paddedDimension(dimension);
    long[] words = new long[padded];
    new MaskStream(seed(jobId, round)).addTo(words, 0, padded, 1);
    this.negative = new boolean[padded];
    for (int j = 0; j < padded; j++) {
      negative[j] = (words[j] & 1) == 1;
    }
  }

  /** The smallest power of two at or above {@code dimension}. */
  public static int paddedDimension(int dimension) {
    if (dimension < 1 || dimension > (1 << 30)) {
      throw new IllegalArgumentException("dimension must be in [1, 2^30], was " + dimension);
    }
    return dimension == 1 ? 1 : Integer.highestOneBit(dimension - 1) << 1;
  }

  public int paddedDimension() {
    return padded;
  }

  /** {@code H D x / sqrt(p)} of x padded to p (x is not changed). */
  public double[] rotate(double[] x) {
    if (x.length > padded) {
      throw new IllegalArgumentException(
          "vector has " + x.length + " values, more than the rotation's " + padded);
    }
    double[] y = new double[padded];
    for (int j = 0; j < x.length; j++) {
      y[j] = negative[j] ? -x[j] : x[j];
    }
    transform(y);
    return y;
  }

  /** The inverse, {@code D H y / sqrt(p)}, in place. */
  public void invert(double[] y) {
    if (y.length != padded) {
      throw new IllegalArgumentException(
          "vector has " + y.length + " values, the rotation " + padded);
    }
    transform(y);
    for (int j = 0; j < padded; j++) {
      if (negative[j]) {
        y[j] = -y[j];
      }
    }
  }

  /** The normalized fast Walsh-Hadamard transform, in place (its own inverse). */
  private static void transform(double[] y) {
    int n = y.length;
    for (int half = 1; half < n; half <<= 1) {
      for (int start = 0; start < n; start += half << 1) {
        for (int j = start; j < start + half; j++) {
          double a = y[j];
          double b = y[j + half];
          y[j] = a + b;
          y[j + half] = a - b;
        }
      }
    }
    double scale = 1 / Math.sqrt(n);
    for (int j = 0; j < n; j++) {
      y[j] *= scale;
    }
  }

  static byte[] seed(String jobId, long round) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(Bytes.lp(LABEL));
      sha.update(Bytes.lp(jobId));
      sha.update(Bytes.u64(round));
      return sha.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
