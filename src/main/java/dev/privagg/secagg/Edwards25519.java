package dev.privagg.secagg;

import java.math.BigInteger;
import java.util.random.RandomGenerator;
import org.bouncycastle.math.ec.rfc7748.X25519Field;

/**
 * The prime-order subgroup of edwards25519 (RFC 8032, Section 5.1), with the 32-byte encoding of
 * RFC 8032 5.1.2: the group that mask keys and the commitments of verifiable secret sharing live
 * in, so that a commitment to a mask key's polynomial can be checked against the key itself.
 *
 * <p>{@link #decode} accepts exactly what libsodium's {@code crypto_core_ed25519_is_valid_point}
 * accepts (canonical, on the curve, in the subgroup of order {@link #ORDER}, not the identity), so
 * the Java and Python clients refuse the same points. Scalars are integers mod {@link #ORDER}, as
 * 32 bytes little-endian. Field arithmetic is BouncyCastle's {@code X25519Field}; the scalar
 * multiplication (fixed 4-bit windows, table lookups by index) is not constant-time, which a
 * client's own secrets of one round are exposed to on its own machine only.
 */
public final class Edwards25519 {
  private static final class F extends X25519Field {}

  /** The field's prime, {@code 2^255 - 19}. */
  static final BigInteger P = BigInteger.ONE.shiftLeft(255).subtract(BigInteger.valueOf(19));

  /** The subgroup's order l, {@code 2^252 + 27742317777372353535851937790883648493}. */
  public static final BigInteger ORDER =
      BigInteger.ONE.shiftLeft(252).add(new BigInteger("27742317777372353535851937790883648493"));

  /** Bytes of an encoded point or scalar. */
  public static final int BYTES = 32;

  private static final BigInteger D =
      BigInteger.valueOf(-121665).multiply(BigInteger.valueOf(121666).modInverse(P)).mod(P);

  /** d and 2d, in the limbs of BouncyCastle's field arithmetic. */
  private static final int[] D_LIMBS = limbs(D);

  private static final int[] D2_LIMBS = limbs(D.shiftLeft(1).mod(P));

  /**
   * A point in extended coordinates {@code (X : Y : Z : T)}: x = X/Z, y = Y/Z, xy = T/Z, each a
   * field element in BouncyCastle's {@code X25519Field} limbs (its arithmetic is some twenty times
   * faster than {@link BigInteger}'s here).
   */
  public static final class Point {
    private final int[] x;
    private final int[] y;
    private final int[] z;
    private final int[] t;

    private Point(int[] x, int[] y, int[] z, int[] t) {
      this.x = x;
      this.y = y;
      this.z = z;
      this.t = t;
    }

    /** This point plus {@code o} (RFC 8032 5.1.4, the unified addition for a = -1). */
    public Point plus(Point o) {
      int[] a = F.create();
      int[] b = F.create();
      int[] c = F.create();
      int[] d = F.create();
      int[] u = F.create();
      int[] v = F.create();
      sub(y, x, u);
      sub(o.y, o.x, v);
      F.mul(u, v, a);
      add(y, x, u);
      add(o.y, o.x, v);
      F.mul(u, v, b);
      F.mul(t, D2_LIMBS, u);
      F.mul(u, o.t, c);
      F.mul(z, o.z, u);
      add(u, u, d);
      int[] e = F.create();
      int[] f = F.create();
      int[] g = F.create();
      int[] h = F.create();
      sub(b, a, e);
      sub(d, c, f);
      add(d, c, g);
      add(b, a, h);
      return product(e, f, g, h);
    }

    /** Twice this point (RFC 8032 5.1.4, the doubling formula). */
    Point doubled() {
      int[] a = F.create();
      int[] b = F.create();
      int[] c = F.create();
      int[] u = F.create();
      F.sqr(x, a);
      F.sqr(y, b);
      F.sqr(z, u);
      add(u, u, c);
      int[] h = F.create();
      add(a, b, h);
      add(x, y, u);
      F.sqr(u, u);
      int[] e = F.create();
      sub(h, u, e);
      int[] g = F.create();
      sub(a, b, g);
      int[] f = F.create();
      add(c, g, f);
      return product(e, f, g, h);
    }

    /** {@code (E F : G H : F G : E H)}, the last step of both formulas. */
    private static Point product(int[] e, int[] f, int[] g, int[] h) {
      int[] x3 = F.create();
      int[] y3 = F.create();
      int[] z3 = F.create();
      int[] t3 = F.create();
      F.mul(e, f, x3);
      F.mul(g, h, y3);
      F.mul(f, g, z3);
      F.mul(e, h, t3);
      return new Point(x3, y3, z3, t3);
    }

    /** {@code k} times this point, for any {@code k >= 0}: 4-bit fixed windows. */
    public Point times(BigInteger k) {
      if (k.signum() < 0) {
        throw new IllegalArgumentException("a scalar must not be negative, was " + k);
      }
      if (k.bitLength() <= WINDOW) {
        return small(k.intValue());
      }
      Point[] multiples = new Point[1 << WINDOW];
      multiples[0] = IDENTITY;
      for (int i = 1; i < multiples.length; i++) {
        multiples[i] = multiples[i - 1].plus(this);
      }
      int windows = (k.bitLength() + WINDOW - 1) / WINDOW;
      Point result = IDENTITY;
      for (int w = windows - 1; w >= 0; w--) {
        for (int i = 0; i < WINDOW; i++) {
          result = result.doubled();
        }
        int digit = window(k, w);
        if (digit != 0) {
          result = result.plus(multiples[digit]);
        }
      }
      return result;
    }

    /** {@code k} times this point for a small {@code k >= 0} (a holder's x): double and add. */
    private Point small(int k) {
      Point result = IDENTITY;
      for (int i = 31 - Integer.numberOfLeadingZeros(k); i >= 0; i--) {
        result = result.doubled();
        if ((k >>> i & 1) != 0) {
          result = result.plus(this);
        }
      }
      return result;
    }

    /** The RFC 8032 encoding: y little-endian, the sign of x in the top bit. */
    public byte[] encode() {
      int[] zInverse = F.create();
      F.inv(z, zInverse);
      int[] affineX = F.create();
      int[] affineY = F.create();
      F.mul(x, zInverse, affineX);
      F.mul(y, zInverse, affineY);
      F.normalize(affineX);
      F.normalize(affineY);
      byte[] xBytes = new byte[BYTES];
      byte[] out = new byte[BYTES];
      F.encode(affineX, xBytes, 0);
      F.encode(affineY, out, 0);
      if ((xBytes[0] & 1) != 0) {
        out[BYTES - 1] |= (byte) 0x80;
      }
      return out;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Point o && sameRatio(x, z, o.x, o.z) && sameRatio(y, z, o.y, o.z);
    }

    /** Whether {@code a / b = c / d}, as {@code a d = c b}. */
    private static boolean sameRatio(int[] a, int[] b, int[] c, int[] d) {
      int[] left = F.create();
      int[] right = F.create();
      F.mul(a, d, left);
      F.mul(c, b, right);
      F.normalize(left);
      F.normalize(right);
      return F.areEqualVar(left, right);
    }

    @Override
    public int hashCode() {
      return java.util.Arrays.hashCode(encode());
    }
  }

  /** {@code a + b} into {@code out}, carried so that any later product stays in range. */
  private static void add(int[] a, int[] b, int[] out) {
    F.add(a, b, out);
    F.carry(out);
  }

  /** {@code a - b} into {@code out}, carried. */
  private static void sub(int[] a, int[] b, int[] out) {
    F.sub(a, b, out);
    F.carry(out);
  }

  private static int[] limbs(BigInteger value) {
    int[] out = F.create();
    F.decode(littleEndian(value), 0, out);
    return out;
  }

  /** The neutral element. */
  public static final Point IDENTITY =
      new Point(
          limbs(BigInteger.ZERO),
          limbs(BigInteger.ONE),
          limbs(BigInteger.ONE),
          limbs(BigInteger.ZERO));

  /** The base point B of RFC 8032, which generates the subgroup. */
  public static final Point BASE =
      decodeUnchecked(
          littleEndian(BigInteger.valueOf(4).multiply(BigInteger.valueOf(5).modInverse(P)).mod(P)));

  private Edwards25519() {}

  private static final int WINDOW = 4;

  /** {@code BASE_TABLE[w][d] = d 2^(4w) B}: base multiplication by additions only. */
  private static final Point[][] BASE_TABLE = baseTable();

  private static Point[][] baseTable() {
    int windows = (ORDER.bitLength() + WINDOW - 1) / WINDOW;
    Point[][] table = new Point[windows][1 << WINDOW];
    Point power = BASE;
    for (int w = 0; w < windows; w++) {
      table[w][0] = IDENTITY;
      for (int d = 1; d < table[w].length; d++) {
        table[w][d] = table[w][d - 1].plus(power);
      }
      for (int i = 0; i < WINDOW; i++) {
        power = power.doubled();
      }
    }
    return table;
  }

  private static int window(BigInteger k, int w) {
    int digit = 0;
    for (int i = WINDOW - 1; i >= 0; i--) {
      digit = digit << 1 | (k.testBit(w * WINDOW + i) ? 1 : 0);
    }
    return digit;
  }

  /** {@code k B}, for {@code 0 <= k < l}. */
  public static Point baseTimes(BigInteger k) {
    if (k.signum() < 0 || k.bitLength() > BASE_TABLE.length * WINDOW) {
      return BASE.times(k.mod(ORDER));
    }
    Point result = IDENTITY;
    for (int w = 0; w < BASE_TABLE.length; w++) {
      int digit = window(k, w);
      if (digit != 0) {
        result = result.plus(BASE_TABLE[w][digit]);
      }
    }
    return result;
  }

  /**
   * Decodes a point from a client, refusing what libsodium refuses.
   *
   * @throws IllegalArgumentException naming what is wrong: not 32 bytes, y not below p, not on the
   *     curve, x = 0 with the sign bit set, the identity, or outside the prime-order subgroup
   */
  public static Point decode(String field, byte[] encoded) {
    Bytes.requireLength(field, encoded, BYTES);
    Point point = decodeUnchecked(encoded);
    if (point == null) {
      throw new IllegalArgumentException(field + " is not the encoding of a point of edwards25519");
    }
    if (point.equals(IDENTITY)) {
      throw new IllegalArgumentException(field + " is the identity, which no secret commits to");
    }
    if (!point.times(ORDER).equals(IDENTITY)) {
      throw new IllegalArgumentException(
          field + " is not in edwards25519's subgroup of prime order (it has a small-order part)");
    }
    return point;
  }

  /** Whether {@link #decode} accepts {@code encoded}. */
  public static boolean isValid(byte[] encoded) {
    try {
      decode("point", encoded);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * The point encoded at {@code offset}, or null if the 32 bytes there encode none; no subgroup
   * check: for a dealer's coefficient commitments, where a small-order part either cancels at the
   * holder's x (the share is then still on the polynomial of the prime-order parts) or makes the
   * check fail. libsodium, which the Python client uses, refuses such points outright, so the two
   * clients may differ on which holders reject such a dealer, never on an accepted share.
   */
  static Point decodeOnCurve(byte[] bytes, int offset) {
    return decodeUnchecked(java.util.Arrays.copyOfRange(bytes, offset, offset + BYTES));
  }

  /** RFC 8032 5.1.3: the point, or null if the bytes encode none. */
  private static Point decodeUnchecked(byte[] encoded) {
    byte[] copy = encoded.clone();
    boolean sign = (copy[BYTES - 1] & 0x80) != 0;
    copy[BYTES - 1] &= 0x7f;
    if (fromLittleEndian(copy).compareTo(P) >= 0) {
      return null;
    }
    int[] y = F.create();
    F.decode(copy, 0, y);
    // x^2 = (y^2 - 1) / (d y^2 + 1)
    int[] y2 = F.create();
    F.sqr(y, y2);
    int[] u = F.create();
    F.copy(y2, 0, u, 0);
    F.subOne(u);
    F.normalize(u);
    int[] v = F.create();
    F.mul(y2, D_LIMBS, v);
    F.addOne(v);
    F.normalize(v);
    int[] x = F.create();
    if (!F.sqrtRatioVar(u, v, x)) {
      return null;
    }
    F.normalize(x);
    boolean xIsZero = F.isZeroVar(x);
    if (xIsZero && sign) {
      return null;
    }
    byte[] xBytes = new byte[BYTES];
    F.encode(x, xBytes, 0);
    if (((xBytes[0] & 1) != 0) != sign) {
      F.negate(x, x);
      F.normalize(x);
    }
    int[] t = F.create();
    F.mul(x, y, t);
    return new Point(x, y, limbs(BigInteger.ONE), t);
  }

  /** A scalar as 32 bytes little-endian. */
  public static byte[] scalarBytes(BigInteger scalar) {
    if (scalar.signum() < 0 || scalar.compareTo(ORDER) >= 0) {
      throw new IllegalArgumentException("a scalar must be in [0, l), was " + scalar);
    }
    return littleEndian(scalar);
  }

  /**
   * A scalar from 32 bytes little-endian.
   *
   * @throws IllegalArgumentException if not 32 bytes or not below {@link #ORDER}
   */
  public static BigInteger scalar(String field, byte[] bytes) {
    Bytes.requireLength(field, bytes, BYTES);
    BigInteger value = fromLittleEndian(bytes);
    if (value.compareTo(ORDER) >= 0) {
      throw new IllegalArgumentException(field + " is not a scalar below the group order l");
    }
    return value;
  }

  /** A uniform scalar in [1, l): 64 random bytes reduced mod l (bias below 2^-250), 0 redrawn. */
  public static BigInteger randomScalar(RandomGenerator random) {
    byte[] wide = new byte[64];
    while (true) {
      random.nextBytes(wide);
      BigInteger s = fromLittleEndian(wide).mod(ORDER);
      if (s.signum() != 0) {
        return s;
      }
    }
  }

  static byte[] littleEndian(BigInteger value) {
    byte[] big = value.toByteArray();
    byte[] out = new byte[BYTES];
    for (int i = 0; i < big.length && i < BYTES; i++) {
      out[i] = big[big.length - 1 - i];
    }
    return out;
  }

  static BigInteger fromLittleEndian(byte[] bytes) {
    byte[] big = new byte[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      big[i] = bytes[bytes.length - 1 - i];
    }
    return new BigInteger(1, big);
  }
}
