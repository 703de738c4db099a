package dev.privagg.secagg;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Who masks with whom, decided between the shares and the masked inputs from each client's receipt
 * (the neighbours whose shares did not decrypt for it), so that a client sending junk shares leaves
 * the round before anyone masks with it instead of spoiling the unmasking (issue 32, item 3).
 *
 * <p>The rules, with r the roster's {@link RoundThresholds.Choice#rejectionLimit} (the most
 * colluders a neighbourhood holds but for 2^-41 / n) and r + 1 the most misbehaving neighbours of
 * an honest client: those colluders and the one client two neighbouring worlds differ by, whatever
 * it does. Judged at r, the colluders and that one client could reject an honest dealer r + 1 times
 * and have it removed, and the cascade with it (issue 32's final review).
 *
 * <ol>
 *   <li>The confirmed clients start as those that shared (U2) and sent a receipt.
 *   <li>A client whose shares more than r + 1 of them reject leaves (an honest client's shares are
 *       rejected only by misbehaving clients).
 *   <li>A receipt that still rejects more than r + 1 of those left is a lie (an honest client meets
 *       at most r + 1 misbehaving dealers): its sender leaves, its rejections count for nothing.
 *       Dealers go first so that a junk sender beyond the declared rate is the one to leave, not
 *       each honest neighbour that names it.
 *   <li>Every other rejection cuts the pair: neither masks with the other, and the rejecter holds
 *       no share of the rejected.
 *   <li>A client left with fewer than t - 1 holders or partners among the confirmed leaves (its
 *       secrets could not be reconstructed, or it would refuse to mask); repeated until none does.
 * </ol>
 *
 * <p>What remains needs no more than the thresholds allow: t <= k - x - (r + 1) leaves each secret
 * t good shares when x holders fail and r + 1 rejected it, so a dealer that stays (junk to at most
 * r + 1) and then withholds its own share still has t. The extra client is one of the x (the margin
 * L = D + 1 of {@link RoundThresholds}): a pair it cuts costs its honest neighbour the holder its
 * dropout would.
 */
public final class ShareConfirmation {
  private ShareConfirmation() {}

  /** Why a client left at confirmation. */
  public enum Removal {
    /** More than r + 1 neighbours rejected its shares. */
    SHARES_REJECTED,
    /** Its receipt rejected more than r + 1 neighbours' shares. */
    TOO_MANY_REJECTIONS,
    /** Fewer than t - 1 holders or partners remained. */
    TOO_FEW_PARTNERS
  }

  /**
   * The outcome: the confirmed clients (sorted), the cut pairs (each {@code {lo, hi}}, sorted), and
   * the clients that shared but were removed, with why.
   */
  public record Result(int[] confirmed, int[][] cuts, Map<Integer, Removal> removed) {
    public Result {
      confirmed = confirmed.clone();
      cuts = Arrays.stream(cuts).map(int[]::clone).toArray(int[][]::new);
      removed = Map.copyOf(removed);
    }

    @Override
    public int[] confirmed() {
      return confirmed.clone();
    }

    @Override
    public int[][] cuts() {
      return Arrays.stream(cuts).map(int[]::clone).toArray(int[][]::new);
    }
  }

  /**
   * @param neighbourhood each client's neighbourhood, itself included, sorted
   * @param shared U2: whose shares were routed
   * @param receipts per roster index, the senders its receipt rejects (sorted, distinct, its
   *     neighbours in U2), or null when it sent none
   * @param threshold t
   * @param rejectionLimit r
   */
  public static Result decide(
      int n,
      IntFunction<int[]> neighbourhood,
      boolean[] shared,
      int[][] receipts,
      int threshold,
      int rejectionLimit) {
    if (shared.length != n || receipts.length != n) {
      throw new IllegalArgumentException(
          "shared and receipts must have one entry per roster index (" + n + ")");
    }
    boolean[] in = new boolean[n];
    Removal[] why = new Removal[n];
    for (int u = 0; u < n; u++) {
      in[u] = shared[u] && receipts[u] != null;
    }
    int tolerated = toleratedRejections(rejectionLimit);
    int[] rejectedBy = new int[n];
    for (int v = 0; v < n; v++) {
      if (in[v]) {
        for (int u : receipts[v]) {
          rejectedBy[u]++;
        }
      }
    }
    for (int u = 0; u < n; u++) {
      if (in[u] && rejectedBy[u] > tolerated) {
        in[u] = false;
        why[u] = Removal.SHARES_REJECTED;
      }
    }
    boolean[] dealerLeft = in.clone();
    for (int u = 0; u < n; u++) {
      if (in[u] && rejectionsOfThoseLeft(receipts[u], dealerLeft) > tolerated) {
        in[u] = false;
        why[u] = Removal.TOO_MANY_REJECTIONS;
      }
    }
    boolean changed = true;
    while (changed) {
      changed = false;
      for (int u = 0; u < n; u++) {
        if (in[u] && partnersOf(u, neighbourhood.apply(u), in, receipts) + 1 < threshold) {
          in[u] = false;
          why[u] = Removal.TOO_FEW_PARTNERS;
          changed = true;
        }
      }
    }
    List<int[]> cuts = new ArrayList<>();
    for (int v = 0; v < n; v++) {
      if (in[v]) {
        for (int u : receipts[v]) {
          if (in[u] && !(Arrays.binarySearch(receipts[u], v) >= 0 && u < v)) {
            cuts.add(new int[] {Math.min(u, v), Math.max(u, v)});
          }
        }
      }
    }
    cuts.sort((a, b) -> a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]));
    Map<Integer, Removal> removed = new java.util.TreeMap<>();
    List<Integer> confirmed = new ArrayList<>();
    for (int u = 0; u < n; u++) {
      if (in[u]) {
        confirmed.add(u);
      } else if (why[u] != null) {
        removed.put(u, why[u]);
      }
    }
    return new Result(
        confirmed.stream().mapToInt(Integer::intValue).toArray(),
        cuts.toArray(int[][]::new),
        removed);
  }

  /**
   * r + 1: the rejections of an honest client, or cuts of its pairs, the colluders (r) and the one
   * client neighbouring worlds differ by can cause; the job removes, and a client refuses, beyond.
   */
  public static int toleratedRejections(int rejectionLimit) {
    return rejectionLimit + 1;
  }

  private static int rejectionsOfThoseLeft(int[] rejected, boolean[] left) {
    int count = 0;
    for (int v : rejected) {
      if (left[v]) {
        count++;
      }
    }
    return count;
  }

  /**
   * Confirmed neighbours of {@code u} with no rejection either way: those it masks with, and (a cut
   * removing a holder only for the rejected side) a lower bound on its holders.
   */
  private static int partnersOf(int u, int[] neighbours, boolean[] in, int[][] receipts) {
    int partners = 0;
    for (int v : neighbours) {
      if (v != u
          && in[v]
          && Arrays.binarySearch(receipts[v], u) < 0
          && Arrays.binarySearch(receipts[u], v) < 0) {
        partners++;
      }
    }
    return partners;
  }

  /** Whether the sorted pairs {@code cuts} hold the pair of {@code a} and {@code b}. */
  public static boolean isCut(int[][] cuts, int a, int b) {
    int lo = Math.min(a, b);
    int hi = Math.max(a, b);
    int from = 0;
    int to = cuts.length - 1;
    while (from <= to) {
      int mid = (from + to) >>> 1;
      int[] c = cuts[mid];
      int cmp = c[0] != lo ? Integer.compare(c[0], lo) : Integer.compare(c[1], hi);
      if (cmp == 0) {
        return true;
      }
      if (cmp < 0) {
        from = mid + 1;
      } else {
        to = mid - 1;
      }
    }
    return false;
  }
}
