package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The per-client-list attack of issue 32's second review (F2): a lying server shows every holder a
 * survivor list of its own, the target u in it, and in it, dropped, a few of u's honest partners
 * the holder holds shares of. Each holder's guards pass (enough of its neighbourhood and partners
 * survive in its own list), so without the consistency round every honest client answers, and the
 * server gathers u's self-mask seed and the mask key of every partner of u: u's input, exactly,
 * with no colluder at all. With it, a client reveals only once (n + A) / 2 + 1 clients of U3 have
 * signed its own statement, and no list but one can gather that many.
 */
class PerClientSurvivorListsAttackTest {
  private static final ThreatModel DEFAULT_RATES =
      RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server");
  private static final int N = 100;
  private static final int D = 4;

  @Test
  void listsOfTheirOwn_wouldRecoverAnInputWithoutTheConsistencyRound_butNoClientRevealsWithIt() {
    SecAggCohort cohort = SecAggCohort.checked(N, DEFAULT_RATES, 32);
    int k = cohort.degree;
    int t = cohort.threshold;
    long[][] units = units(7);
    cohort.shareKeys(i -> true);
    int[] everyone = cohort.maskedInputs(i -> true, units);
    int u = 0;
    Map<Integer, TreeSet<Integer>> dropped = assignDroppedPartners(cohort, u, k - t);
    int[][] lists = new int[N][];
    for (int w = 0; w < N; w++) {
      TreeSet<Integer> out = dropped.getOrDefault(w, new TreeSet<>());
      lists[w] = IntStream.range(0, N).filter(i -> !out.contains(i)).toArray();
    }
    long distinct = Arrays.stream(lists).map(Arrays::toString).distinct().count();
    assertThat(distinct).as("lists shown").isGreaterThan(50);

    // 1. Every honest client's guards pass for its own list: it signs it (it would have answered).
    for (int w = 0; w < N; w++) {
      byte[] signature = cohort.clients.get(w).signSurvivors(everyone, lists[w]);
      assertThat(signature).as("client %d signs its own list", w).hasSize(64);
    }

    // 2. What the clients would have revealed for their lists recovers u's units exactly.
    assertThat(recoverFromListAnswers(cohort, u, lists, t))
        .as("the per-client-list attack without the consistency round")
        .isEqualTo(units[u]);

    // 3. With it: each client is handed every signature there is, and none reveals anything.
    Map<Integer, byte[]> signatures = new HashMap<>();
    for (int w = 0; w < N; w++) {
      signatures.put(w, cohort.clients.get(w).signSurvivors(everyone, lists[w]));
    }
    int answered = 0;
    for (int w = 0; w < N; w++) {
      try {
        cohort.clients.get(w).unmask(signatures);
        answered++;
        assertThat(dropped.getOrDefault(w, new TreeSet<>()))
            .as("only the clients shown the one list everyone else signed could answer")
            .isEmpty();
      } catch (IllegalStateException refused) {
        assertThat(refused).hasMessageContaining("survivors signed the survivor list it signed");
      }
    }
    // The clients told nothing dropped share one statement; whether it reaches the majority or
    // not, it drops no one, so no client that answered revealed a mask-key share of anyone.
    assertThat(answered).isLessThanOrEqualTo(N - dropped.size());
  }

  /**
   * For each honest partner v of u, t holders of v (its neighbours but itself) whose lists drop v;
   * no holder drops more than {@code capacity} of its neighbours, so that t of its neighbourhood
   * and of its partners survive in its list. Greedy, the holders with most room first.
   */
  private static Map<Integer, TreeSet<Integer>> assignDroppedPartners(
      SecAggCohort cohort, int u, int capacity) {
    int t = cohort.threshold;
    Map<Integer, TreeSet<Integer>> dropped = new HashMap<>();
    for (int v : cohort.neighbourhoods[u]) {
      if (v == u) {
        continue;
      }
      List<Integer> holders = new ArrayList<>();
      for (int w : cohort.neighbourhoods[v]) {
        if (w != v && dropped.getOrDefault(w, new TreeSet<>()).size() < capacity) {
          holders.add(w);
        }
      }
      holders.sort(
          (a, b) ->
              Integer.compare(
                  dropped.getOrDefault(a, new TreeSet<>()).size(),
                  dropped.getOrDefault(b, new TreeSet<>()).size()));
      assertThat(holders.size())
          .as("holders with room for partner %d", v)
          .isGreaterThanOrEqualTo(t);
      for (int w : holders.subList(0, t)) {
        dropped.computeIfAbsent(w, x -> new TreeSet<>()).add(v);
      }
    }
    return dropped;
  }

  /**
   * The shares each client holds that the protocol before the consistency round revealed for its
   * list (seed shares of its neighbours in the list, mask-key shares of those not), and u's units
   * from them: its self-mask seed and every partner's mask key.
   */
  private static long[] recoverFromListAnswers(SecAggCohort cohort, int u, int[][] lists, int t) {
    List<Shamir.Share> seed = new ArrayList<>();
    Map<Integer, List<Shamir.Share>> keys = new HashMap<>();
    for (int w = 0; w < N; w++) {
      boolean[] in = new boolean[N];
      for (int i : lists[w]) {
        in[i] = true;
      }
      for (int x : cohort.neighbourhoods[w]) {
        byte[][] held = cohort.clients.get(w).heldSharesOf(x);
        if (held == null) {
          continue;
        }
        if (in[x] && x == u) {
          seed.add(new Shamir.Share(w + 1, held[1]));
        } else if (!in[x]) {
          keys.computeIfAbsent(x, y -> new ArrayList<>()).add(new Shamir.Share(w + 1, held[0]));
        }
      }
    }
    long[] y = SecAggCohort.words(cohort.maskedInputs.get(u));
    new MaskStream(DerivedKeys.selfMaskKey(cohort.ctx, Shamir.reconstruct(seed, t), u))
        .addTo(y, 0, D, -1);
    for (int v : cohort.neighbourhoods[u]) {
      if (v != u) {
        byte[] maskKey = Shamir.reconstruct(keys.get(v), t);
        byte[] pair =
            DerivedKeys.pairwiseMaskKey(
                cohort.ctx, maskKey, v, cohort.roster.get(u).maskPublicKey(), u);
        new MaskStream(pair).addTo(y, 0, D, u < v ? -1 : 1);
      }
    }
    return y;
  }

  private static long[][] units(long seed) {
    Random random = new Random(seed);
    long[][] units = new long[N][D];
    for (long[] x : units) {
      for (int j = 0; j < D; j++) {
        x[j] = random.nextInt(1 << 20) - (1 << 19);
      }
    }
    return units;
  }
}
