package dev.privagg.secagg;

import java.security.MessageDigest;
import java.util.List;

/**
 * The digest of the roster a client was shown, with its graph:
 *
 * <pre>
 * SHA-256( lp("privagg-secagg-v1/roster") || ctx || u32(n) || n entries of 128 bytes
 *          || u32(k) || u32(t) || u32(|perm|) || perm )
 * </pre>
 *
 * <p>Every share is sealed under it ({@link ShareCipher}'s associated data), so a share decrypts
 * only for a holder shown the same roster as its dealer: a server that shows different clients
 * different rosters (of other sizes, so of other thresholds T) splits them into groups that hold
 * nothing of each other, and each group's survivor statements are counted against its own roster.
 */
public final class RosterDigest {
  static final String DOMAIN = "privagg-secagg-v1/roster";
  public static final int BYTES = 32;

  private RosterDigest() {}

  public static byte[] of(
      RoundContext ctx, List<AdvertisedKeys> roster, int degree, int threshold, int[] permutation) {
    MessageDigest sha256 = Bytes.sha256();
    sha256.update(Bytes.lp(DOMAIN));
    sha256.update(ctx.bytes());
    sha256.update(Bytes.u32(roster.size()));
    for (AdvertisedKeys entry : roster) {
      sha256.update(entry.bytes());
    }
    sha256.update(Bytes.u32(degree));
    sha256.update(Bytes.u32(threshold));
    sha256.update(Bytes.u32(permutation.length));
    for (int p : permutation) {
      sha256.update(Bytes.u32(p));
    }
    return sha256.digest();
  }
}
