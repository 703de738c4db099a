package dev.privagg.secagg;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * Shamir secret sharing of 32-byte secrets over the prime field of {@code p = 2^521 - 1} (the field
 * of FCP's {@code ShamirSecretSharing}). The secret, read as an unsigned big-endian integer, is the
 * constant term of a polynomial of degree {@code t - 1} whose other coefficients are uniform in
 * {@code [0, p)}; the share for {@code x} is the polynomial's value there, as 66 bytes, big-endian.
 * Any t shares determine the polynomial and so the secret; fewer are consistent with every secret
 * (Shamir, "How to share a secret", CACM 1979).
 *
 * <p>Shares come from clients, so {@link #reconstruct} checks everything it is given and throws
 * {@link IllegalArgumentException} for anything malformed, for the caller to turn into a reject.
 */
public final class Shamir {
  /** The field's prime, the Mersenne prime {@code 2^521 - 1}. */
  public static final BigInteger PRIME = BigInteger.ONE.shiftLeft(521).subtract(BigInteger.ONE);

  /** Bytes of a share: 521 bits, big-endian. */
  public static final int SHARE_BYTES = 66;

  /** Bytes of a secret. */
  public static final int SECRET_BYTES = 32;

  private static final BigInteger SECRET_BOUND = BigInteger.ONE.shiftLeft(8 * SECRET_BYTES);

  private Shamir() {}

  /** A share: the polynomial's value at {@code x >= 1}, as {@link #SHARE_BYTES} bytes. */
  public record Share(int x, byte[] value) {
    public Share {
      value = value.clone();
    }

    @Override
    public byte[] value() {
      return value.clone();
    }
  }

  /**
   * Shares {@code secret} so that any {@code threshold} of the shares determine it.
   *
   * @param xs distinct evaluation points, each {@code >= 1} (x = 0 would be the secret itself)
   * @param random source of the polynomial's coefficients; a CSPRNG outside tests
   * @return the shares, in the order of {@code xs}
   */
  public static byte[][] share(byte[] secret, int threshold, int[] xs, RandomGenerator random) {
    if (!(threshold >= 1 && threshold <= xs.length)) {
      throw new IllegalArgumentException(
          "threshold must be in [1, " + xs.length + "] (the number of xs), was " + threshold);
    }
    BigInteger[] coefficients = new BigInteger[threshold - 1];
    for (int i = 0; i < coefficients.length; i++) {
      coefficients[i] = uniformFieldElement(random);
    }
    return share(secret, xs, coefficients);
  }

  /**
   * Shares {@code secret} with the given coefficients of x^1 .. x^(t-1): for test vectors, where
   * the coefficients are fixed.
   */
  static byte[][] share(byte[] secret, int[] xs, BigInteger[] coefficients) {
    Bytes.requireLength("secret", secret, SECRET_BYTES);
    requireDistinctPoints(xs);
    BigInteger[] polynomial = new BigInteger[coefficients.length + 1];
    polynomial[0] = new BigInteger(1, secret);
    for (int i = 0; i < coefficients.length; i++) {
      if (!(coefficients[i].signum() >= 0 && coefficients[i].compareTo(PRIME) < 0)) {
        throw new IllegalArgumentException(
            "coefficient " + (i + 1) + " must be in [0, 2^521 - 1), was " + coefficients[i]);
      }
      polynomial[i + 1] = coefficients[i];
    }
    byte[][] shares = new byte[xs.length][];
    for (int i = 0; i < xs.length; i++) {
      shares[i] = toBytes(evaluate(polynomial, BigInteger.valueOf(xs[i])), SHARE_BYTES);
    }
    return shares;
  }

  /**
   * The secret from {@code threshold} shares (the first {@code threshold} of {@code shares}), by
   * Lagrange interpolation at 0.
   *
   * @throws IllegalArgumentException if there are fewer than {@code threshold} shares, a share is
   *     not 66 bytes or not below p, two shares have the same x, or the interpolated value is not
   *     below 2^256 (the shares are not of one 32-byte secret)
   */
  public static byte[] reconstruct(List<Share> shares, int threshold) {
    if (threshold < 1) {
      throw new IllegalArgumentException("threshold must be >= 1, was " + threshold);
    }
    if (shares.size() < threshold) {
      throw new IllegalArgumentException(
          "shares must number at least the threshold " + threshold + ", were " + shares.size());
    }
    List<Share> used = shares.subList(0, threshold);
    BigInteger[] xs = new BigInteger[threshold];
    BigInteger[] ys = new BigInteger[threshold];
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < threshold; i++) {
      Share share = used.get(i);
      if (share.x() < 1) {
        throw new IllegalArgumentException("share x must be >= 1, was " + share.x());
      }
      if (!seen.add(share.x())) {
        throw new IllegalArgumentException("share x must be distinct, " + share.x() + " repeats");
      }
      byte[] value = share.value();
      if (value.length != SHARE_BYTES) {
        throw new IllegalArgumentException(
            "share at x = " + share.x() + " must be 66 bytes, was " + value.length);
      }
      ys[i] = new BigInteger(1, value);
      if (ys[i].compareTo(PRIME) >= 0) {
        throw new IllegalArgumentException(
            "share at x = " + share.x() + " must be below 2^521 - 1, was not");
      }
      xs[i] = BigInteger.valueOf(share.x());
    }
    BigInteger secret = interpolateAtZero(xs, ys);
    if (secret.compareTo(SECRET_BOUND) >= 0) {
      throw new IllegalArgumentException(
          "shares must be of one 32-byte secret, but interpolate to a value >= 2^256");
    }
    return toBytes(secret, SECRET_BYTES);
  }

  /** Horner's rule, mod p: {@code polynomial[0] + polynomial[1] x + ...}. */
  static BigInteger evaluate(BigInteger[] polynomial, BigInteger x) {
    BigInteger value = BigInteger.ZERO;
    for (int i = polynomial.length - 1; i >= 0; i--) {
      value = value.multiply(x).add(polynomial[i]).mod(PRIME);
    }
    return value;
  }

  /** {@code sum_i y_i prod_{j != i} x_j / (x_j - x_i)}, mod p. */
  private static BigInteger interpolateAtZero(BigInteger[] xs, BigInteger[] ys) {
    BigInteger sum = BigInteger.ZERO;
    for (int i = 0; i < xs.length; i++) {
      BigInteger numerator = BigInteger.ONE;
      BigInteger denominator = BigInteger.ONE;
      for (int j = 0; j < xs.length; j++) {
        if (j != i) {
          numerator = numerator.multiply(xs[j]).mod(PRIME);
          denominator = denominator.multiply(xs[j].subtract(xs[i])).mod(PRIME);
        }
      }
      BigInteger lagrange = numerator.multiply(denominator.modInverse(PRIME));
      sum = sum.add(ys[i].multiply(lagrange)).mod(PRIME);
    }
    return sum;
  }

  /** Uniform in [0, p): 521 random bits, rejecting p itself (all ones, probability 2^-521). */
  private static BigInteger uniformFieldElement(RandomGenerator random) {
    byte[] bytes = new byte[SHARE_BYTES];
    BigInteger value;
    do {
      random.nextBytes(bytes);
      bytes[0] &= 0x01;
      value = new BigInteger(1, bytes);
    } while (value.compareTo(PRIME) >= 0);
    return value;
  }

  private static void requireDistinctPoints(int[] xs) {
    int[] sorted = xs.clone();
    Arrays.sort(sorted);
    for (int i = 0; i < sorted.length; i++) {
      if (sorted[i] < 1) {
        throw new IllegalArgumentException("xs must all be >= 1, found " + sorted[i]);
      }
      if (i > 0 && sorted[i] == sorted[i - 1]) {
        throw new IllegalArgumentException("xs must be distinct, " + sorted[i] + " repeats");
      }
    }
  }

  /** {@code value} as exactly {@code length} big-endian bytes ({@code value < 256^length}). */
  static byte[] toBytes(BigInteger value, int length) {
    byte[] raw = value.toByteArray();
    byte[] out = new byte[length];
    int copy = Math.min(raw.length, length);
    System.arraycopy(raw, raw.length - copy, out, length - copy, copy);
    return out;
  }
}
