package dev.privagg.secagg;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.List;

/**
 * The Harary graph's node permutation, derived from the round context and the roster's entries so
 * that every client can check it and the server cannot seat colluders around a client it chose
 * (docs/secure-aggregation.md, "The ring"). The entries count as a set: the ring is built on their
 * canonical order (unsigned lexicographic order of the 96 bytes c_pk || s_pk || commitment), so
 * reordering the roster, which the server chooses, gives the same ring.
 *
 * <pre>
 * e_0 < ... < e_{n-1}: the entries sorted
 * seed = SHA-256(ctx || lp("harary-permutation") || u32(n) || e_0 || ... || e_{n-1})
 * </pre>
 *
 * then a Fisher-Yates shuffle of the ranks 0..n-1: for i from n - 1 down to 1, swap positions i and
 * j, j uniform in [0, i], drawn from the mask words of the seed ({@link MaskStream}: little-endian
 * 64-bit words of AES-256-CTR), each draw taking the next word w and accepting it iff w < 2^64 -
 * (2^64 mod (i + 1)), then j = w mod (i + 1). Ring position q holds the roster index of the entry
 * whose rank the shuffle put at q.
 *
 * <p>What this does not stop: colluders who advertise after seeing honest clients' keys can try
 * keys of their own, and the server can leave advertisers out; each try is one more random ring, so
 * 2^g tries multiply the chance against the 2^-41 bounds by 2^g.
 */
public final class RosterPermutation {
  /** Mask words generated per refill; rejections are rare, so one refill usually suffices. */
  private static final int WORDS_PER_REFILL = 1024;

  private RosterPermutation() {}

  /** The seed of the roster's ring: of its entries in canonical order. */
  public static byte[] seed(RoundContext ctx, List<AdvertisedKeys> roster) {
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      sha256.update(ctx.bytes());
      sha256.update(Bytes.lp("harary-permutation"));
      sha256.update(Bytes.u32(roster.size()));
      for (int i : canonicalOrder(roster)) {
        sha256.update(entry(roster.get(i)));
      }
      return sha256.digest();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  /** The permutation: position q of the ring holds roster index {@code of(...)[q]}. */
  public static int[] of(RoundContext ctx, List<AdvertisedKeys> roster) {
    int n = roster.size();
    int[] byRank = canonicalOrder(roster);
    int[] ranks = new int[n];
    for (int i = 0; i < n; i++) {
      ranks[i] = i;
    }
    Words words = new Words(new MaskStream(seed(ctx, roster)));
    for (int i = n - 1; i > 0; i--) {
      int j = words.below(i + 1);
      int swap = ranks[i];
      ranks[i] = ranks[j];
      ranks[j] = swap;
    }
    int[] permutation = new int[n];
    for (int q = 0; q < n; q++) {
      permutation[q] = byRank[ranks[q]];
    }
    return permutation;
  }

  /** Roster indices sorted by their entries' bytes (unsigned): rank r is index order[r]. */
  private static int[] canonicalOrder(List<AdvertisedKeys> roster) {
    byte[][] entries = new byte[roster.size()][];
    for (int i = 0; i < entries.length; i++) {
      entries[i] = entry(roster.get(i));
    }
    return java.util.stream.IntStream.range(0, entries.length)
        .boxed()
        .sorted((a, b) -> java.util.Arrays.compareUnsigned(entries[a], entries[b]))
        .mapToInt(Integer::intValue)
        .toArray();
  }

  private static byte[] entry(AdvertisedKeys k) {
    return Bytes.concat(k.encryptionPublicKey(), k.maskPublicKey(), k.selfMaskCommitment());
  }

  /** The seed's mask words in order, drawn as unbiased integers below a bound. */
  private static final class Words {
    private final MaskStream stream;
    private final long[] buffer = new long[WORDS_PER_REFILL];
    private int next = WORDS_PER_REFILL;
    private int consumed;

    Words(MaskStream stream) {
      this.stream = stream;
    }

    int below(int bound) {
      // 2^64 mod bound: the words at or above 2^64 - that would favour small remainders.
      long excess = Long.remainderUnsigned(-(long) bound, bound);
      while (true) {
        long w = word();
        if (excess == 0 || Long.compareUnsigned(w, -excess) < 0) {
          return (int) Long.remainderUnsigned(w, bound);
        }
      }
    }

    private long word() {
      if (next == WORDS_PER_REFILL) {
        java.util.Arrays.fill(buffer, 0);
        stream.addTo(buffer, consumed, consumed + WORDS_PER_REFILL, 1);
        consumed += WORDS_PER_REFILL;
        next = 0;
      }
      return buffer[next++];
    }
  }
}
