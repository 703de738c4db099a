package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Review 6: the survivor statement binds what the <em>signers</em> saw, not what the target saw. A
 * lying server shows the target x a {@code Confirmed} of its own (x's honest neighbours E left out
 * of U2: no cut, so the rejection limit r does not apply, and x's guards at masking pass with t - 1
 * partners P). Everyone else is shown the real {@code Confirmed} (x and E confirmed, no cut: E mask
 * with x) and one survivor list that keeps x and E and drops P. x never signs it (its U2 differs)
 * and is not needed: E alone can reach T, and they reveal x's self-mask seed and P's mask keys. The
 * consistency round does nothing against this; 2t > k + a does: the attack needs a + (k - t) >= t
 * revealed seed shares. On the complete graph of 9 with t = 4 (only t > a, T = 5) it recovers x's
 * units exactly; at the t the job's rates give 9 clients (5: 2t > k + a) the same attack gathers
 * too few shares.
 */
class ConfirmedEquivocationAttackTest {
  private static final int N = 9;
  private static final int D = 16;

  @Test
  void belowTwoTAboveKPlusA_aConfirmedOfItsOwnForTheTarget_recoversItsUpdate() {
    assertThat(attack(4)).as("t = 4 of 9: 2t = k - 1").isTrue();
  }

  @Test
  void atTheCompleteGraphsThreshold_theSameAttackGathersTooFewShares() {
    // RoundThresholds' rule for the complete graph: 2t >= n + A + 1, here A = 0: t = 5.
    int t = (N + 0 + 1 + 1) / 2;
    assertThat(2 * t).isGreaterThan(N);

    assertThat(attack(t)).as("t = %d of 9", t).isFalse();
  }

  /**
   * The attack at threshold t: x is shown U2 = itself and t - 1 partners, everyone else the whole
   * roster and a survivor list dropping those partners; true iff x's units are recovered from the
   * shares the signers reveal.
   */
  private static boolean attack(int t) {
    SecAggCohort cohort = new SecAggCohort(N, N, t, 606);
    int x = 0;
    int[] partners = IntStream.rangeClosed(1, t - 1).toArray();
    int[] everyone = IntStream.range(0, N).toArray();
    int[] targetsConfirmed = IntStream.range(0, t).toArray(); // the others left out, for x only
    int[] survivors = IntStream.range(0, N).filter(i -> i == 0 || i >= t).toArray();
    int[][] noCuts = new int[0][];

    cohort.shareKeys(i -> true);
    for (int i = 0; i < N; i++) {
      assertThat(cohort.clients.get(i).onShares(cohort.routedTo(i))).isEmpty();
    }
    cohort.clients.get(x).onConfirmed(targetsConfirmed, noCuts);
    for (int i = 1; i < N; i++) {
      cohort.clients.get(i).onConfirmed(everyone, noCuts);
    }
    long[][] units = units(7);
    Map<Integer, byte[]> masked = new HashMap<>();
    for (int i = 0; i < N; i++) {
      masked.put(i, cohort.clients.get(i).maskedInput(units[i]));
    }

    // Phase 5: one list, shown to everyone; x refuses it (its U2 differs), the others sign it.
    assertThatThrownBy(() -> cohort.clients.get(x).signSurvivors(everyone, survivors))
        .isInstanceOf(IllegalStateException.class);
    Map<Integer, byte[]> signatures = new HashMap<>();
    for (int w : survivors) {
      if (w != x) {
        signatures.put(w, cohort.clients.get(w).signSurvivors(everyone, survivors));
      }
    }

    // Phase 6: the signers answer if enough signed.
    List<Shamir.Share> seedOfX = new ArrayList<>();
    Map<Integer, List<Shamir.Share>> maskKeys = new HashMap<>();
    for (int w : signatures.keySet()) {
      UnmaskShares answer;
      try {
        answer = cohort.clients.get(w).unmask(signatures);
      } catch (IllegalStateException refused) {
        continue;
      }
      for (UnmaskShares.RevealedShare s : answer.selfMaskShares()) {
        if (s.index() == x) {
          seedOfX.add(new Shamir.Share(w + 1, s.share()));
        }
      }
      for (UnmaskShares.RevealedShare s : answer.maskKeyShares()) {
        maskKeys
            .computeIfAbsent(s.index(), k -> new ArrayList<>())
            .add(new Shamir.Share(w + 1, s.share()));
      }
    }
    if (seedOfX.size() < t) {
      return false;
    }
    long[] y = SecAggCohort.words(masked.get(x));
    new MaskStream(DerivedKeys.selfMaskKey(cohort.ctx, Shamir.reconstruct(seedOfX, t), x))
        .addTo(y, 0, D, -1);
    for (int v : partners) {
      List<Shamir.Share> shares = maskKeys.getOrDefault(v, List.of());
      if (shares.size() < t) {
        return false;
      }
      byte[] pair =
          DerivedKeys.pairwiseMaskKey(
              cohort.ctx,
              Shamir.reconstruct(shares, t),
              v,
              cohort.roster.get(x).maskPublicKey(),
              x);
      new MaskStream(pair).addTo(y, 0, D, x < v ? -1 : 1);
    }
    return java.util.Arrays.equals(y, units[x]);
  }

  private static long[][] units(long seed) {
    Random random = new Random(seed);
    long[][] units = new long[N][D];
    for (long[] u : units) {
      for (int j = 0; j < D; j++) {
        u[j] = random.nextInt(1 << 20) - (1 << 19);
      }
    }
    return units;
  }
}
