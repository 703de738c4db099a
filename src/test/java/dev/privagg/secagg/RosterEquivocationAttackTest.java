package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.secagg.ClientSession.EncryptedShare;
import dev.privagg.secagg.ClientSession.RoutedShare;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Review 5: the consistency round's claim "no two survivor statements both reach T = floor((n + A)
 * / 2) + 1 signatures" (RoundThresholds.signatureThreshold, design.md "One survivor list") counts
 * the honest clients of one roster of n. But n is the size of the roster each client is shown, and
 * a lying server can show different clients rosters of different sizes, built only of genuine
 * advertisements, each within the declared rates, each with exactly the (k, t) the job's rates give
 * its size. Then the honest clients that sign one statement need only be a majority of their own
 * roster, and two disjoint majorities of two rosters both reach their T.
 *
 * <p>Here 10 honest clients, no colluder at all, the default rates 0.1 / 0.1 (semi-malicious):
 * clients 0..2 are shown the roster of the first 5 advertisements (the complete graph, t = 3, T =
 * 3), clients 3..9 the roster of all 10 (complete, t = 6, T = 6); indices and keys agree. Before
 * shares were sealed under the roster's digest, every routed share decrypted, and with one
 * Confirmed and one survivor list per group both groups revealed shares of client 3 (its seed to
 * the large group, its mask key to the small one): two statements answered. Now each share opens
 * only for a holder shown its dealer's roster, so the groups hold nothing of each other.
 */
class RosterEquivocationAttackTest {
  private static final ThreatModel RATES =
      RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server");

  @Test
  void twoRostersOfDifferentSizes_getTwoSurvivorStatementsAnswered_withoutAnyColluder() {
    int small = 5;
    int large = 10;
    RoundThresholds.Choice cSmall = RoundThresholds.choose(small, RATES).orElseThrow();
    RoundThresholds.Choice cLarge = RoundThresholds.choose(large, RATES).orElseThrow();
    assertThat(cSmall.complete()).isTrue();
    assertThat(cLarge.complete()).isTrue();
    assertThat(RoundThresholds.signatureThreshold(small, RATES)).isEqualTo(3);
    assertThat(RoundThresholds.signatureThreshold(large, RATES)).isEqualTo(6);

    RoundContext ctx = new RoundContext("equivocation-job", 5, new byte[16]);
    List<ClientSession> clients = new ArrayList<>();
    List<AdvertisedKeys> all = new ArrayList<>();
    var random = SecAggCohort.seeded(55);
    for (int i = 0; i < large; i++) {
      ClientSession client = ClientSession.start(ctx, "client-" + i, RATES, random);
      clients.add(client);
      all.add(client.advertise());
    }
    List<AdvertisedKeys> rosterSmall = all.subList(0, small);
    int[] groupSmall = IntStream.range(0, 3).toArray();
    int[] groupLarge = IntStream.range(3, large).toArray();
    int[] sizeOf = new int[large];

    // Phase 2: each client takes the roster it is shown (the job's k and t for its size).
    Map<Integer, List<EncryptedShare>> sent = new HashMap<>();
    for (int i : groupSmall) {
      sizeOf[i] = small;
      sent.put(
          i,
          clients
              .get(i)
              .onRoster(
                  rosterSmall,
                  cSmall.neighbourhoodSize(),
                  cSmall.threshold(),
                  IntStream.range(0, small).toArray()));
    }
    for (int i : groupLarge) {
      sizeOf[i] = large;
      sent.put(
          i,
          clients
              .get(i)
              .onRoster(
                  all,
                  cLarge.neighbourhoodSize(),
                  cLarge.threshold(),
                  IntStream.range(0, large).toArray()));
    }
    // Phase 3: each recipient is routed the shares addressed to it by the members of its roster.
    // A share sealed under one roster does not open under the other (RosterDigest in the AAD).
    for (int v = 0; v < large; v++) {
      List<RoutedShare> routed = new ArrayList<>();
      List<Integer> otherGroup = new ArrayList<>();
      for (int u = 0; u < sizeOf[v]; u++) {
        for (EncryptedShare s : sent.get(u)) {
          if (s.recipient() == v) {
            routed.add(new RoutedShare(u, s.ciphertext(), clients.get(u).commitments()));
            if (sizeOf[u] != sizeOf[v]) {
              otherGroup.add(u);
            }
          }
        }
      }
      clients.get(v).onShares(routed);
      assertThat(clients.get(v).rejectedSenders())
          .as("client %d rejects exactly the dealers shown the other roster", v)
          .containsExactly(otherGroup.stream().mapToInt(Integer::intValue).toArray());
    }
    // So no client holds a share of a client shown the other roster: the two groups are two
    // separate rounds, each counted against its own roster, and the one whose rejections exceed
    // its cut limit sends no masked input.
    for (int v = 0; v < large; v++) {
      for (int u = 0; u < large; u++) {
        if (sizeOf[u] != sizeOf[v]) {
          assertThat(clients.get(v).heldSharesOf(u))
              .as("client %d holds shares of client %d", v, u)
              .isNull();
        }
      }
    }
  }
}
