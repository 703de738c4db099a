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
      byte[] secret = bytes(32);
      int[] xs = distinctXs(n);
      byte[][] shares = Shamir.share(secret, t, xs, random);
      List<Shamir.Share> all = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        all.add(new Shamir.Share(xs[i], shares[i]));
      }
      Collections.shuffle(all, new Random(trial));

      assertThat(List.of(shares)).allSatisfy(share -> assertThat(share).hasSize(66));
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
      byte[][] allShares = Shamir.share(bytes(32), t, all, random);
      int[] xs = Arrays.copyOf(all, t - 1);
      byte[][] shares = Arrays.copyOf(allShares, t - 1);
      byte[] other = bytes(32);

      BigInteger[] points = new BigInteger[t];
      BigInteger[] values = new BigInteger[t];
      points[0] = BigInteger.ZERO;
      values[0] = new BigInteger(1, other);
      for (int i = 0; i < t - 1; i++) {
        points[i + 1] = BigInteger.valueOf(xs[i]);
        values[i + 1] = new BigInteger(1, shares[i]);
      }
      BigInteger[] polynomial = interpolate(points, values);
      BigInteger[] coefficients = new BigInteger[t - 1];
      System.arraycopy(polynomial, 1, coefficients, 0, t - 1);

      assertThat(Shamir.share(other, xs, coefficients)).isDeepEqualTo(shares);
    }
  }

  @Test
  void aWrongShare_givesAnotherSecret_orNoneAtAll() {
    int[] xs = {3, 5, 8};
    byte[] secret = bytes(32);
    byte[][] shares = Shamir.share(secret, 3, xs, random);
    byte[] offByOne = shares[1].clone();
    offByOne[65] ^= 1;
    // The share at 5 enters with Lagrange coefficient 3 * 8 / ((3 - 5)(8 - 5)) = -4: one unit
    // off moves the secret by 4, still a 32-byte value.
    int shareMovedBy = (shares[1][65] & 1) == 0 ? 1 : -1;
    BigInteger moved = new BigInteger(1, secret).subtract(BigInteger.valueOf(4L * shareMovedBy));

    assertThat(new BigInteger(1, Shamir.reconstruct(withSecond(xs, shares, offByOne), 3)))
        .isEqualTo(moved.mod(P));

    // A random share moves it uniformly over [0, p): >= 2^256 but with probability 2^-265.
    assertThatThrownBy(() -> Shamir.reconstruct(withSecond(xs, shares, randomShare()), 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("shares must be of one 32-byte secret, but interpolate to a value >= 2^256");
  }

  private static List<Shamir.Share> withSecond(int[] xs, byte[][] shares, byte[] second) {
    return List.of(
        new Shamir.Share(xs[0], shares[0]),
        new Shamir.Share(xs[1], second),
        new Shamir.Share(xs[2], shares[2]));
  }

  @Test
  void reconstruct_refusesMalformedShares_namingWhatIsWrong() {
    byte[][] shares = Shamir.share(bytes(32), 2, new int[] {1, 2}, random);
    Shamir.Share first = new Shamir.Share(1, shares[0]);
    byte[] tooLarge = Shamir.toBytes(P, 66);

    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("shares must number at least the threshold 2, were 1");
    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first, new Shamir.Share(1, shares[1])), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("share x must be distinct, 1 repeats");
    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first, new Shamir.Share(2, bytes(65))), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("share at x = 2 must be 66 bytes, was 65");
    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first, new Shamir.Share(2, tooLarge)), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("share at x = 2 must be below 2^521 - 1, was not");
    assertThatThrownBy(() -> Shamir.reconstruct(List.of(first, new Shamir.Share(0, shares[1])), 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("share x must be >= 1, was 0");
  }

  @Test
  void share_refusesBadThresholdsPointsAndSecrets() {
    assertThatThrownBy(() -> Shamir.share(bytes(32), 3, new int[] {1, 2}, random))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threshold must be in [1, 2] (the number of xs), was 3");
    assertThatThrownBy(() -> Shamir.share(bytes(32), 1, new int[] {0, 2}, random))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("xs must all be >= 1, found 0");
    assertThatThrownBy(() -> Shamir.share(bytes(32), 1, new int[] {2, 2}, random))
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

  private byte[] randomShare() {
    byte[] share = bytes(66);
    share[0] &= 0x01;
    return share;
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
