package dev.privagg.secagg;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.List;

/**
 * The Harary graph's node permutation, derived from the round context and the whole roster so that
 * every client can check it and the server cannot place colluders around a client it chose
 * (docs/secure-aggregation.md, "The neighbour graph"):
 *
 * <pre>
 * seed = SHA-256(ctx || lp("harary-permutation") || u32(n) || c_pk_0 || s_pk_0 || commitment_0
 *                || ... || c_pk_{n-1} || s_pk_{n-1} || commitment_{n-1})
 * </pre>
 *
 * then a Fisher-Yates shuffle of the identity: for i from n - 1 down to 1, swap positions i and j,
 * j uniform in [0, i], drawn from the mask words of the seed ({@link MaskStream}: little-endian
 * 64-bit words of AES-256-CTR), each draw taking the next word w and accepting it iff w < 2^64 -
 * (2^64 mod (i + 1)), then j = w mod (i + 1).
 *
 * <p>What this does not stop: colluders who advertise after seeing honest clients' keys can try
 * many keys of their own; each try is one more random graph, so a server that evaluates 2^g rosters
 * within the advertise phase multiplies its chance against the 2^-40 bounds by 2^g.
 */
public final class RosterPermutation {
  /** Mask words generated per refill; rejections are rare, so one refill usually suffices. */
  private static final int WORDS_PER_REFILL = 1024;

  private RosterPermutation() {}

  /** The seed of the roster's permutation. */
  public static byte[] seed(RoundContext ctx, List<AdvertisedKeys> roster) {
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      sha256.update(ctx.bytes());
      sha256.update(Bytes.lp("harary-permutation"));
      sha256.update(Bytes.u32(roster.size()));
      for (AdvertisedKeys entry : roster) {
        sha256.update(entry.encryptionPublicKey());
        sha256.update(entry.maskPublicKey());
        sha256.update(entry.selfMaskCommitment());
      }
      return sha256.digest();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  /** The permutation: position q of the ring holds node {@code of(...)[q]}. */
  public static int[] of(RoundContext ctx, List<AdvertisedKeys> roster) {
    int n = roster.size();
    int[] permutation = new int[n];
    for (int i = 0; i < n; i++) {
      permutation[i] = i;
    }
    Words words = new Words(new MaskStream(seed(ctx, roster)));
    for (int i = n - 1; i > 0; i--) {
      int j = words.below(i + 1);
      int swap = permutation[i];
      permutation[i] = permutation[j];
      permutation[j] = swap;
    }
    return permutation;
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
