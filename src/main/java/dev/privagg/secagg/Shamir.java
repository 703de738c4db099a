package dev.privagg.secagg;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * Shamir secret sharing of scalars over the field of integers mod l, the order of edwards25519's
 * prime-order subgroup ({@link Edwards25519#ORDER}), so that every coefficient of a sharing
 * polynomial has a commitment in that group ({@link FeldmanCommitments}) and a holder can check its
 * share before it relies on it (Feldman, FOCS 1987). The secret is the constant term of a
 * polynomial of degree {@code t - 1} whose other coefficients are uniform in {@code [1, l)}; the
 * share for {@code x} is the polynomial's value there. Secrets and shares are 32 bytes,
 * little-endian, below l. Any t shares determine the polynomial and so the secret; fewer are
 * consistent with every secret (Shamir, "How to share a secret", CACM 1979).
 *
 * <p>Shares come from clients, so {@link #reconstruct} checks everything it is given and throws
 * {@link IllegalArgumentException} for anything malformed, for the caller to turn into a reject.
 */
public final class Shamir {
  /** The field's prime, the group order l. */
  public static final BigInteger PRIME = Edwards25519.ORDER;

  /** Bytes of a share: a scalar, little-endian. */
  public static final int SHARE_BYTES = Edwards25519.BYTES;

  /** Bytes of a secret: a scalar, little-endian. */
  public static final int SECRET_BYTES = Edwards25519.BYTES;

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
   * A sharing polynomial, coefficients from the constant term (the secret) up: what a dealer keeps
   * while it hands out the shares and publishes the commitments.
   */
  public static final class Polynomial {
    private final BigInteger[] coefficients;

    private Polynomial(BigInteger[] coefficients) {
      this.coefficients = coefficients;
    }

    /**
     * A polynomial of degree {@code threshold - 1} with {@code secret} as its constant term, so
     * that any {@code threshold} of its values determine the secret.
     *
     * @param random source of the other coefficients; a CSPRNG outside tests
     */
    public static Polynomial random(byte[] secret, int threshold, RandomGenerator random) {
      if (threshold < 1) {
        throw new IllegalArgumentException("threshold must be >= 1, was " + threshold);
      }
      BigInteger[] coefficients = new BigInteger[threshold - 1];
      for (int i = 0; i < coefficients.length; i++) {
        coefficients[i] = Edwards25519.randomScalar(random);
      }
      return of(secret, coefficients);
    }

    /**
     * The polynomial with {@code secret} and the given coefficients of x^1 .. x^(t-1): for test
     * vectors, where the coefficients are fixed.
     */
    static Polynomial of(byte[] secret, BigInteger[] coefficients) {
      BigInteger[] all = new BigInteger[coefficients.length + 1];
      all[0] = Edwards25519.scalar("secret", secret);
      for (int i = 0; i < coefficients.length; i++) {
        if (!(coefficients[i].signum() > 0 && coefficients[i].compareTo(PRIME) < 0)) {
          throw new IllegalArgumentException(
              "coefficient " + (i + 1) + " must be in [1, l), was " + coefficients[i]);
        }
        all[i + 1] = coefficients[i];
      }
      return new Polynomial(all);
    }

    /** t, the number of shares that determine the secret. */
    public int threshold() {
      return coefficients.length;
    }

    /** The shares at {@code xs} (distinct, each {@code >= 1}), in their order. */
    public byte[][] sharesAt(int[] xs) {
      requireDistinctPoints(xs);
      byte[][] shares = new byte[xs.length][];
      for (int i = 0; i < xs.length; i++) {
        shares[i] = Edwards25519.scalarBytes(evaluate(coefficients, BigInteger.valueOf(xs[i])));
      }
      return shares;
    }

    /** The commitments to coefficients 1 .. t-1 ({@link FeldmanCommitments#of}). */
    public byte[] commitments() {
      return FeldmanCommitments.of(coefficients);
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
    return Polynomial.random(secret, threshold, random).sharesAt(xs);
  }

  /**
   * Shares {@code secret} with the given coefficients of x^1 .. x^(t-1): for test vectors, where
   * the coefficients are fixed.
   */
  static byte[][] share(byte[] secret, int[] xs, BigInteger[] coefficients) {
    return Polynomial.of(secret, coefficients).sharesAt(xs);
  }

  /**
   * The secret from {@code threshold} shares (the first {@code threshold} of {@code shares}), by
   * Lagrange interpolation at 0.
   *
   * @throws IllegalArgumentException if there are fewer than {@code threshold} shares, a share is
   *     not 32 bytes or not below l, or two shares have the same x
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
      ys[i] = Edwards25519.scalar("share at x = " + share.x(), share.value());
      xs[i] = BigInteger.valueOf(share.x());
    }
    return Edwards25519.scalarBytes(interpolateAtZero(xs, ys));
  }

  /** Horner's rule, mod l: {@code polynomial[0] + polynomial[1] x + ...}. */
  static BigInteger evaluate(BigInteger[] polynomial, BigInteger x) {
    BigInteger value = BigInteger.ZERO;
    for (int i = polynomial.length - 1; i >= 0; i--) {
      value = value.multiply(x).add(polynomial[i]).mod(PRIME);
    }
    return value;
  }

  /** {@code sum_i y_i prod_{j != i} x_j / (x_j - x_i)}, mod l. */
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
}
