package dev.privagg.privacy;

/**
 * Bounds a sum the server could not clip term by term (secure aggregation: clients clip their own
 * updates, and the job only sees their sum modulo 2^64).
 *
 * <p>Honest clients' privacy must not depend on what the others send, so the bound is a function of
 * the sum that one honest client's update (norm at most C) can move by at most C, whatever the
 * other inputs add up to: {@link #fold} each coordinate of the integer sum, which is 1-Lipschitz on
 * the circle of 2^64 units (a sum that wraps past 2^63 does not jump), then {@link #scaleToNorm}
 * the decoded sum to a radius fixed by the spec (a projection onto a fixed ball is 1-Lipschitz).
 * Both bounds are {@code rounds.maxClients} clipped updates, which no round of honest clients
 * exceeds, so honest sums pass unchanged. A bound that moved with the round's count of
 * contributions would not do: a count one higher with one more client lets the scaled sum move by
 * up to 2 C (by about sqrt(2) C when another client's input puts the sum just past its bound).
 */
public final class SumBound {
  private SumBound() {}

  /** Largest count whose fold bound leaves more than half the circle to fold over. */
  private static final long MAX_FOLD_CONTRIBUTIONS = 1L << 25;

  /**
   * Folds each coordinate of {@code units} (a sum modulo 2^64, read as signed) into [-B, B] with B
   * = {@code maxContributions * 2^36}, in place: a coordinate within B stays as it is; beyond it,
   * the rest of the circle, from B up through 2^63 (where it wraps) to -B, is mapped linearly onto
   * [-B, B] backwards, so the result is continuous around the whole circle and moves by at most as
   * much as the coordinate does. Returns whether a coordinate was beyond B (then some client sent
   * more than C).
   */
  public static boolean fold(long[] units, long maxContributions) {
    if (!(maxContributions >= 0 && maxContributions < MAX_FOLD_CONTRIBUTIONS)) {
      throw new IllegalArgumentException(
          "maxContributions must be in [0, 2^25), was " + maxContributions);
    }
    long bound = maxContributions << ClippedSum.FRACTION_BITS;
    double rest = 0x1p64 - 2.0 * bound; // the circle's arc from B to -B, through 2^63
    boolean folded = false;
    for (int i = 0; i < units.length; i++) {
      long t = units[i];
      if (t > bound || t < -bound) {
        long along = t - bound; // how far past B, unsigned: in (0, rest)
        double fraction = unsigned(along) / rest;
        units[i] = Math.round(bound - 2.0 * bound * fraction);
        folded = true;
      }
    }
    return folded;
  }

  private static double unsigned(long value) {
    return value >= 0 ? value : ((value >>> 1) | (value & 1)) * 2.0;
  }

  /**
   * {@code sum} scaled down to L2 norm {@code contributions * clipNorm} if it is longer (in place);
   * returns whether it was. For secure aggregation {@code contributions} is the spec's fixed {@code
   * rounds.maxClients}, never the round's count (see the class comment).
   */
  public static boolean scaleToNorm(double[] sum, long contributions, double clipNorm) {
    double limit = contributions * clipNorm;
    double squares = 0;
    for (double v : sum) {
      squares += v * v;
    }
    double norm = Math.sqrt(squares);
    if (!(norm > limit)) {
      return false;
    }
    double scale = limit / norm;
    for (int i = 0; i < sum.length; i++) {
      sum[i] *= scale;
    }
    return true;
  }
}
