package dev.privagg.secagg;

import dev.privagg.secagg.Edwards25519.Point;
import java.math.BigInteger;

/**
 * Feldman's verifiable secret sharing (FOCS 1987) in edwards25519's prime-order subgroup: a dealer
 * publishes {@code C_j = a_j B} for the coefficients {@code a_1 .. a_(t-1)} of its sharing
 * polynomial, and the holder at {@code x} accepts its share {@code s} only if {@code s B = C_0 +
 * sum_j x^j C_j}, where {@code C_0} is the commitment to the secret the dealer advertised before
 * (its mask public key, or its self-mask commitment). Shares that pass at t holders then
 * reconstruct the advertised secret, whatever the dealer did: a dealer cannot hand out shares that
 * decrypt but lie on no common polynomial, or on one whose secret is not the advertised one.
 *
 * <p>The commitments reveal {@code a_j B}, nothing a holder could not learn about the secret from
 * {@code C_0} already under the discrete logarithm assumption.
 */
public final class FeldmanCommitments {
  private FeldmanCommitments() {}

  /** Bytes of the commitments of a polynomial with {@code threshold} coefficients. */
  public static int bytes(int threshold) {
    return (threshold - 1) * Edwards25519.BYTES;
  }

  /**
   * The commitments to coefficients 1 .. t-1 of {@code polynomial} (its constant term first),
   * concatenated: {@link #bytes}(t) bytes.
   */
  static byte[] of(BigInteger[] polynomial) {
    byte[] out = new byte[bytes(polynomial.length)];
    for (int j = 1; j < polynomial.length; j++) {
      byte[] c = Edwards25519.baseTimes(polynomial[j]).encode();
      System.arraycopy(c, 0, out, (j - 1) * Edwards25519.BYTES, Edwards25519.BYTES);
    }
    return out;
  }

  /**
   * The index of the first 32-byte commitment that is no canonical encoding of a point on the
   * curve, or -1: such a commitment fails every share here, while libsodium adds it as if it were
   * canonical, so a job must refuse it before any holder checks a share against it.
   */
  public static int firstNotOnCurve(byte[] commitments) {
    for (int at = 0; at + Edwards25519.BYTES <= commitments.length; at += Edwards25519.BYTES) {
      if (Edwards25519.decodeOnCurve(commitments, at) == null) {
        return at / Edwards25519.BYTES;
      }
    }
    return -1;
  }

  /**
   * Whether {@code share} is the value at {@code x} of the polynomial committed to by {@code
   * constant} (C_0) and {@code commitments} (C_1 .. C_(t-1)).
   *
   * @param constant C_0, a point {@link Edwards25519#decode} accepted
   * @param commitments the dealer's {@link #bytes}(threshold) bytes, as received: points that do
   *     not decode make the share fail, they do not throw
   * @param share the share, as received: one that is no scalar in [1, l) fails
   */
  public static boolean verifies(
      Point constant, byte[] commitments, int threshold, int x, byte[] share) {
    if (threshold < 1 || x < 1 || commitments.length != bytes(threshold)) {
      return false;
    }
    BigInteger value;
    try {
      value = Edwards25519.scalar("share", share);
    } catch (IllegalArgumentException e) {
      return false;
    }
    if (value.signum() == 0) {
      // libsodium, which the Python client checks with, has no 0 B: both clients refuse it.
      return false;
    }
    // Horner in the group: (((C_(t-1)) x + C_(t-2)) x + ...) x + C_0.
    BigInteger bigX = BigInteger.valueOf(x);
    Point sum = Edwards25519.IDENTITY;
    for (int j = threshold - 1; j >= 1; j--) {
      Point c = Edwards25519.decodeOnCurve(commitments, (j - 1) * Edwards25519.BYTES);
      if (c == null) {
        return false;
      }
      sum = sum.plus(c).times(bigX);
    }
    return sum.plus(constant).equals(Edwards25519.baseTimes(value));
  }
}
