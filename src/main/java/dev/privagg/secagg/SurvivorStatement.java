package dev.privagg.secagg;

import java.security.MessageDigest;
import java.util.List;

/**
 * What each survivor signs in the consistency round (Bonawitz et al., CCS 2017, Section 4, round
 * 3's ConsistencyCheck): one digest of everything the round's clients must agree on before any of
 * them reveals a share. The roster with its graph, the {@code Confirmed} (U2 and the cut pairs) and
 * the survivor list U3:
 *
 * <pre>
 * SHA-256( lp("privagg-secagg-v1/survivors") || ctx || u32(n) || n entries of 128 bytes
 *          || u32(k) || u32(t) || u32(|perm|) || perm || u32(|U2|) || U2 || u32(|cuts|) || cuts
 *          || u32(|U3|) || U3 )
 * </pre>
 *
 * with every integer a big-endian u32, U2 and U3 ascending and the cuts as ascending (lo, hi)
 * pairs. Two clients that sign the same digest saw the same round in every respect that decides
 * what they reveal.
 */
public final class SurvivorStatement {
  static final String DOMAIN = "privagg-secagg-v1/survivors";

  private SurvivorStatement() {}

  /** The statement of a client's view: the roster as keys. */
  public static byte[] digest(
      RoundContext ctx,
      List<AdvertisedKeys> roster,
      int degree,
      int threshold,
      int[] permutation,
      int[] confirmed,
      int[][] cuts,
      int[] maskedInput) {
    byte[][] entries = new byte[roster.size()][];
    for (int i = 0; i < entries.length; i++) {
      entries[i] = roster.get(i).bytes();
    }
    return digest(ctx, entries, degree, threshold, permutation, confirmed, cuts, maskedInput);
  }

  /**
   * The statement of the job's view: the roster as {@link AdvertisedKeys#ENTRY_BYTES}-byte entries.
   *
   * @throws IllegalArgumentException if an entry has another length, an index is outside the roster
   *     or repeats, or a cut is no pair of distinct indices
   */
  public static byte[] digest(
      RoundContext ctx,
      byte[][] entries,
      int degree,
      int threshold,
      int[] permutation,
      int[] confirmed,
      int[][] cuts,
      int[] maskedInput) {
    int n = entries.length;
    MessageDigest sha256 = Bytes.sha256();
    sha256.update(Bytes.lp(DOMAIN));
    sha256.update(ctx.bytes());
    sha256.update(Bytes.u32(n));
    for (byte[] entry : entries) {
      sha256.update(Bytes.requireLength("roster entry", entry, AdvertisedKeys.ENTRY_BYTES));
    }
    sha256.update(Bytes.u32(degree));
    sha256.update(Bytes.u32(threshold));
    ints(sha256, permutation);
    ints(sha256, ascending("confirmed", confirmed, n));
    int[][] pairs = Unmasking.pairs("cuts", cuts, n);
    sha256.update(Bytes.u32(pairs.length));
    for (int[] p : pairs) {
      sha256.update(Bytes.u32(p[0]));
      sha256.update(Bytes.u32(p[1]));
    }
    ints(sha256, ascending("maskedInput", maskedInput, n));
    return sha256.digest();
  }

  private static int[] ascending(String name, int[] indices, int n) {
    boolean[] in = Unmasking.members(name, indices, n);
    int[] out = new int[indices.length];
    int at = 0;
    for (int i = 0; i < n; i++) {
      if (in[i]) {
        out[at++] = i;
      }
    }
    return out;
  }

  private static void ints(MessageDigest sha256, int[] values) {
    sha256.update(Bytes.u32(values.length));
    for (int v : values) {
      sha256.update(Bytes.u32(v));
    }
  }
}
