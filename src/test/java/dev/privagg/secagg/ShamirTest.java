package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ShamirTest {
  private static final BigInteger P = Shamir.PRIME;

  private final SplittableRandom random = new SplittableRandom(42);

  @Test
  void anyThresholdOfTheShares_reconstructTheSecret() {
    for (int trial = 0; trial < 50; trial++) {
      int n = 1 + random.nextInt(12);
      int t = 1 + random.nextInt(n);
      byte[] secret = scalar();
      int[] xs = distinctXs(n);
      byte[][] shares = Shamir.share(secret, t, xs, random);
      List<Shamir.Share> all = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        all.add(new Shamir.Share(xs[i], shares[i]));
      }
      Collections.shuffle(all, new Random(trial));

      assertThat(List.of(shares)).allSatisfy(share -> assertThat(share).hasSize(32));
      assertThat(Shamir.reconstruct(all.subList(0, t), t)).isEqualTo(secret);
    }
  }

  /**
   * Perfect secrecy, shown constructively: for t - 1 shares of one secret and any other secret,
   * there are coefficients with which sharing the other secret gives exactly those shares (the
   * polynomial through (0, other) and the t - 1 points, of degree at most t - 1). Since the
   * coefficients are uniform, every secret is equally likely given the shares.
   */
  @Test
  void fewerThanThresholdShares_areWhatSharingAnyOtherSecretCouldGive() {
    for (int t = 2; t <= 6; t++) {
      int[] all = distinctXs(t);
      byte[][] allShares = Shamir.share(scalar(), t, all, random);
      int[] xs = Arrays.copyOf(all, t - 1);
      byte[][] shares = Arrays.copyOf(allShares, t - 1);
      byte[] other = scalar();

      BigInteger[] points = new BigInteger[t];
      BigInteger[] values = new BigInteger[t];
      points[0] = BigInteger.ZERO;
      values[0] = value(other);
      for (int i = 0; i < t - 1; i++) {
        points[i + 1] = BigInteger.valueOf(xs[i]);
        values[i + 1] = value(shares[i]);
      }
      BigInteger[] polynomial = interpolate(points, values);
      BigInteger[] coefficients = new BigInteger[t - 1];
      System.arraycopy(polynomial, 1, coefficients, 0, t - 1);

      assertThat(Shamir.share(other, xs, coefficients)).isDeepEqualTo(shares);
    }
  }

  @Test
  void aWrongShare_givesAnotherSecret() {
    int[] xs = {3, 5, 8};
    byte[] secret = scalar();
    byte[][] shares = Shamir.share(secret, 3, xs, random);
    BigInteger second = value(shares[1]);
    byte[] offByOne = Edwards25519.scalarBytes(second.add(BigInteger.ONE).mod(P));
    // The share at 5 enters with Lagrange coefficient 3 * 8 / ((3 - 5)(8 - 5)) = -4: one unit
    // off moves the secret by -4, and nothing in the shares alone tells (the commitments do).
    assertThat(value(Shamir.reconstruct(withSecond(xs, shares, offByOne), 3)))
        .isEqualTo(value(secret).subtract(BigInteger.valueOf(4)).mod(P));
  }

  /** Feldman's check: the honest shares pass, a share off the polynomial or secret fails. */
  @Test
  void commitments_passExactlyTheSharesOfThePolynomial() {
    for (int t = 1; t <= 5; t++) {
      byte[] secret = scalar();
      Shamir.Polynomial polynomial = Shamir.Polynomial.random(secret, t, random);
      int[] xs = distinctXs(t + 2);
      byte[][] shares = polynomial.sharesAt(xs);
      byte[] commitments = polynomial.commitments();
      Edwards25519.Point constant = Edwards25519.baseTimes(value(secret));
      assertThat(commitments).hasSize(FeldmanCommitments.bytes(t));
      for (int i = 0; i < xs.length; i++) {
        assertThat(FeldmanCommitments.verifies(constant, commitments, t, xs[i], shares[i]))
            .isTrue();
        byte[] off = Edwards25519.scalarBytes(value(shares[i]).add(BigInteger.ONE).mod(P));
        assertThat(FeldmanCommitments.verifies(constant, commitments, t, xs[i], off)).isFalse();
        assertThat(FeldmanCommitments.verifies(constant, commitments, t, xs[i] + 1, shares[i]))
            .as("the share of another x, where the polynomial is not constant")
            .isEqualTo(t == 1);
      }
      // A consistent sharing of another secret, under the first secret's constant commitment.
      Shamir.Polynomial other = Shamir.Polynomial.random(scalar(), t, random);
      assertThat(
              FeldmanCommitments.verifies(
                  constant, other.commitments(), t, xs[0], other.sharesAt(xs)[0]))
          .isFalse();
    }
    byte[] notAPoint = new byte[32];
    notAPoint[0] = 2; // y = 2 is on no point of edwards25519
    assertThat(
            FeldmanCommitments.verifies(
                Edwards25519.BASE, notAPoint, 2, 1, Edwards25519.scalarBytes(BigInteger.ONE)))
        .isFalse();
    assertThat(
            FeldmanCommitments.verifies(
                Edwards25519.BASE, new byte[31], 2, 1, Edwards25519.scalarBytes(BigInteger.ONE)))
        .as("commitments of the wrong length")
        .isFalse();
  }

  private static List<Shamir.Share> withSecond(int[] xs, byte[][] shares, byte[] second) {
    return List.of(
        new Shamir.Share(xs[0], shares[0]),
        new Shamir.Share(xs[1], second),
        new Shamir.Share(xs[2], shares[2]));
  }

  @Test
  void reconstruct_refusesMalformedShares_namingWhatIsWrong() {
    byte[][] shares = Shamir.share(scalar(), 2, new int[] {1, 2}, random);
    Shamir.Share first = new Shamir.Share(1, shares[0]);
    byte[] tooLarge = Edwards25519.littleEndian(P);

    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("shares must number at least the threshold 2, were 1");
    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first, new Shamir.Share(1, shares[1])), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("share x must be distinct, 1 repeats");
    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first, new Shamir.Share(2, bytes(65))), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("share at x = 2 must be 32 bytes, was 65 bytes");
    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first, new Shamir.Share(2, tooLarge)), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("share at x = 2 is not a scalar below the group order l");
    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first, new Shamir.Share(0, shares[1])), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("share x must be >= 1, was 0");
  }

  @Test
  void share_refusesBadThresholdsPointsAndSecrets() {
    assertThatThrownBy(() -> Shamir.share(scalar(), 3, new int[] {1, 2}, random))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threshold must be in [1, 2] (the number of xs), was 3");
    assertThatThrownBy(() -> Shamir.share(scalar(), 1, new int[] {0, 2}, random))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("xs must all be >= 1, found 0");
    assertThatThrownBy(() -> Shamir.share(scalar(), 1, new int[] {2, 2}, random))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("xs must be distinct, 2 repeats");
    assertThatThrownBy(() -> Shamir.share(bytes(31), 1, new int[] {1}, random))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("secret must be 32 bytes, was 31 bytes");
  }

  /** Coefficients of the polynomial of degree < n through the n points, mod p (Lagrange). */
  private static BigInteger[] interpolate(BigInteger[] points, BigInteger[] values) {
    int n = points.length;
    BigInteger[] result = zeros(n);
    for (int i = 0; i < n; i++) {
      BigInteger[] basis = zeros(n);
      basis[0] = BigInteger.ONE;
      BigInteger denominator = BigInteger.ONE;
      for (int j = 0; j < n; j++) {
        if (j != i) {
          // basis *= (x - x_j)
          for (int k = n - 1; k >= 0; k--) {
            BigInteger shifted = k > 0 ? basis[k - 1] : BigInteger.ZERO;
            basis[k] = shifted.subtract(basis[k].multiply(points[j])).mod(P);
          }
          denominator = denominator.multiply(points[i].subtract(points[j])).mod(P);
        }
      }
      BigInteger scale = values[i].multiply(denominator.modInverse(P)).mod(P);
      for (int k = 0; k < n; k++) {
        result[k] = result[k].add(basis[k].multiply(scale)).mod(P);
      }
    }
    return result;
  }

  private static BigInteger[] zeros(int n) {
    BigInteger[] out = new BigInteger[n];
    Arrays.fill(out, BigInteger.ZERO);
    return out;
  }

  private byte[] scalar() {
    return Edwards25519.scalarBytes(Edwards25519.randomScalar(random));
  }

  private static BigInteger value(byte[] scalar) {
    return Edwards25519.fromLittleEndian(scalar);
  }

  private int[] distinctXs(int n) {
    return random.ints(1, 10_000).distinct().limit(n).toArray();
  }

  private byte[] bytes(int n) {
    byte[] out = new byte[n];
    random.nextBytes(out);
    return out;
  }
}
