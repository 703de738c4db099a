package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.secagg.ShareConfirmation.Removal;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The job's rules for who masks with whom after the receipts (issue 32, item 3). */
class ShareConfirmationTest {
  private static final int N = 7;
  private static final int[] EVERYONE = IntStream.range(0, N).toArray();

  /** The complete graph of seven. */
  private static ShareConfirmation.Result decide(int[][] receipts, int threshold, int limit) {
    boolean[] shared = new boolean[N];
    java.util.Arrays.fill(shared, true);
    return ShareConfirmation.decide(N, i -> EVERYONE, shared, receipts, threshold, limit);
  }

  private static int[][] noRejections() {
    int[][] receipts = new int[N][];
    for (int i = 0; i < N; i++) {
      receipts[i] = new int[0];
    }
    return receipts;
  }

  @Test
  void withoutRejections_everyClientThatSharedAndSentAReceipt_isConfirmed_withNoCut() {
    int[][] receipts = noRejections();
    receipts[3] = null; // shared, then dropped before its receipt

    ShareConfirmation.Result result = decide(receipts, 3, 1);

    assertThat(result.confirmed()).containsExactly(0, 1, 2, 4, 5, 6);
    assertThat(result.cuts()).isEmpty();
    assertThat(result.removed()).isEmpty();
  }

  @Test
  void rejectionsUpToTheLimit_cutThePair_onceEvenWhenBothSidesReject() {
    int[][] receipts = noRejections();
    receipts[0] = new int[] {5};
    receipts[5] = new int[] {0};
    receipts[2] = new int[] {6};

    ShareConfirmation.Result result = decide(receipts, 3, 1);

    assertThat(result.confirmed()).containsExactly(EVERYONE);
    assertThat(result.cuts()).isDeepEqualTo(new int[][] {{0, 5}, {2, 6}});
    assertThat(ShareConfirmation.isCut(result.cuts(), 6, 2)).isTrue();
    assertThat(ShareConfirmation.isCut(result.cuts(), 0, 2)).isFalse();
  }

  @Test
  void aClientWhoseSharesMoreThanTheLimitReject_leavesBeforeAnyoneMasksWithIt() {
    int[][] receipts = noRejections();
    receipts[1] = new int[] {4};
    receipts[2] = new int[] {4};
    receipts[3] = new int[] {4};

    // r = 2: three rejections are what two colluders and one client more can cause, not more.
    assertThat(decide(receipts, 3, 2).removed()).isEmpty();
    ShareConfirmation.Result result = decide(receipts, 3, 1);

    assertThat(result.confirmed()).containsExactly(0, 1, 2, 3, 5, 6);
    assertThat(result.removed()).isEqualTo(Map.of(4, Removal.SHARES_REJECTED));
    assertThat(result.cuts()).as("no pair with a client that left").isEmpty();
  }

  @Test
  void aReceiptRejectingMoreThanTheLimit_isALie_itsSenderLeaves_andItsRejectionsCountForNothing() {
    // A colluder framing three honest neighbours: an honest client meets at most r + 1 junk
    // senders (r colluders and the one client neighbouring worlds differ by).
    int[][] receipts = noRejections();
    receipts[6] = new int[] {0, 1, 2};
    receipts[5] = new int[] {0, 1};

    ShareConfirmation.Result result = decide(receipts, 3, 1);

    assertThat(result.removed()).isEqualTo(Map.of(6, Removal.TOO_MANY_REJECTIONS));
    assertThat(result.confirmed()).containsExactly(0, 1, 2, 3, 4, 5);
    assertThat(result.cuts()).isDeepEqualTo(new int[][] {{0, 5}, {1, 5}});
  }

  @Test
  void aClientLeftWithFewerThanTMinusOnePartners_leaves_andTheRuleIsAppliedAgainToItsNeighbours() {
    // A ring of 7 with neighbourhoods of 3 (i - 1, i, i + 1), t = 2: each needs one partner.
    HararyGraph ring = HararyGraph.ofNeighbourhoodSize(3, EVERYONE);
    boolean[] shared = new boolean[N];
    java.util.Arrays.fill(shared, true);
    int[][] receipts = noRejections();
    receipts[1] = null; // 1 dropped: 0 keeps 6, 2 keeps 3
    receipts[3] = new int[] {2}; // 2 loses its last partner, then 3 keeps 4 only

    ShareConfirmation.Result result =
        ShareConfirmation.decide(N, ring::neighbourhood, shared, receipts, 2, 1);

    assertThat(result.removed()).isEqualTo(Map.of(2, Removal.TOO_FEW_PARTNERS));
    assertThat(result.confirmed()).containsExactly(0, 3, 4, 5, 6);
    assertThat(result.cuts()).isEmpty();
  }
}
