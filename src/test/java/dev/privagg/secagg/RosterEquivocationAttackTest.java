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
 * Review 5: the consistency round's claim "no two survivor statements both reach T =
 * floor((n + A) / 2) + 1 signatures" (RoundThresholds.signatureThreshold, design.md "One survivor
 * list") counts the honest clients of one roster of n. But n is the size of the roster each client
 * is shown, and a lying server can show different clients rosters of different sizes, built only of
 * genuine advertisements, each within the declared rates, each with exactly the (k, t) the job's
 * rates give its size. Then the honest clients that sign one statement need only be a majority of
 * their own roster, and two disjoint majorities of two rosters both reach their T.
 *
 * <p>Here 17 honest clients, no colluder at all, rates 0.1 / 0.3 (semi-malicious): clients 0..6
 * are shown the roster of the first 12 advertisements (the complete graph, t = 7, T = 7), clients
 * 7..16 the roster of all 17 (complete, t = 10, T = 10); indices and keys agree, so every routed
 * share decrypts. The large group is confirmed without clients 0..6 (whose shares went to the small
 * roster only) and told all of its U2 survived; the small group is told that client 7 (in both
 * rosters) dropped. Each group signs its own statement, each statement has exactly its T signers,
 * and both groups reveal: clients 8..16 (and 7) shares of client 7's self-mask seed, clients 0..6
 * shares of its mask key, although the docs say "every client that reveals saw the same roster,
 * cuts and survivor list ... whatever list it shows whom" and design.md proves "all clients that
 * reveal anything saw the same statement". (Client 7's privacy is still kept here by the second
 * line, 2t > k + a: 7 of the 10 mask-key shares needed. What the consistency round was added for,
 * the per-client lists that no threshold stops, is then guarded only by how hard it is to make
 * several rosters' rings agree on the neighbourhoods involved.)
 */
class RosterEquivocationAttackTest {
  private static final ThreatModel RATES =
      RoundGraph.threatModel(0.3, 0.1, "semi-malicious-server");

  @Test
  void twoRostersOfDifferentSizes_getTwoSurvivorStatementsAnswered_withoutAnyColluder() {
    int small = 12;
    int large = 17;
    RoundThresholds.Choice c12 = RoundThresholds.choose(small, RATES).orElseThrow();
    RoundThresholds.Choice c17 = RoundThresholds.choose(large, RATES).orElseThrow();
    assertThat(c12.complete()).isTrue();
    assertThat(c17.complete()).isTrue();
    assertThat(RoundThresholds.signatureThreshold(small, RATES)).isEqualTo(7);
    assertThat(RoundThresholds.signatureThreshold(large, RATES)).isEqualTo(10);

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
    int[] groupSmall = IntStream.range(0, 7).toArray();
    int[] groupLarge = IntStream.range(7, large).toArray();
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
                  c12.neighbourhoodSize(),
                  c12.threshold(),
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
                  c17.neighbourhoodSize(),
                  c17.threshold(),
                  IntStream.range(0, large).toArray()));
    }
    // Phase 3: each recipient is routed the shares addressed to it by the members of its roster.
    for (int v = 0; v < large; v++) {
      List<RoutedShare> routed = new ArrayList<>();
      for (int u = 0; u < sizeOf[v]; u++) {
        for (EncryptedShare s : sent.get(u)) {
          if (s.recipient() == v) {
            routed.add(new RoutedShare(u, s.ciphertext()));
          }
        }
      }
      assertThat(clients.get(v).onShares(routed)).as("client %d's failed shares", v).isEmpty();
      assertThat(clients.get(v).rejectedSenders()).isEmpty();
    }
    // Phase 4: the small roster is confirmed whole; the large one without clients 0..6, whose
    // shares went to the small roster only (so each client's Confirmed passes its checks).
    int[] u2Small = IntStream.range(0, small).toArray();
    int[] u2Large = IntStream.range(7, large).toArray();
    for (int i = 0; i < large; i++) {
      clients.get(i).onConfirmed(sizeOf[i] == small ? u2Small : u2Large, new int[0][]);
      clients.get(i).maskedInput(new long[] {i, 2L * i});
    }
    // Phase 5: the large roster is told all of its U2 survived; the small one that client 7
    // (of the large group, in both rosters at index 7) dropped.
    int w = 7;
    int[] u3Small = IntStream.range(0, small).filter(i -> i != w).toArray();
    int[] u3Large = u2Large;
    Map<Integer, byte[]> signedSmall = new HashMap<>();
    Map<Integer, byte[]> signedLarge = new HashMap<>();
    for (int i : groupSmall) {
      signedSmall.put(i, clients.get(i).signSurvivors(u2Small, u3Small));
    }
    for (int i : groupLarge) {
      signedLarge.put(i, clients.get(i).signSurvivors(u2Large, u3Large));
    }
    // Phase 6: each group is handed its own statement's signatures.
    Map<Integer, UnmaskShares> revealedSmall = new HashMap<>();
    Map<Integer, UnmaskShares> revealedLarge = new HashMap<>();
    for (int i : groupSmall) {
      try {
        revealedSmall.put(i, clients.get(i).unmask(signedSmall));
      } catch (IllegalStateException refused) {
        // too few signatures on its statement
      }
    }
    for (int i : groupLarge) {
      try {
        revealedLarge.put(i, clients.get(i).unmask(signedLarge));
      } catch (IllegalStateException refused) {
        // too few signatures on its statement
      }
    }

    // Who revealed which secret of client 7: the large group its seed, the small its mask key.
    long seedShares =
        revealedLarge.values().stream()
            .filter(r -> r.selfMaskShares().stream().anyMatch(s -> s.index() == w))
            .count();
    long maskKeyShares =
        revealedSmall.values().stream()
            .filter(r -> r.maskKeyShares().stream().anyMatch(s -> s.index() == w))
            .count();
    System.out.printf(
        "statement of 12 answered by %d, of 17 by %d; shares of client 7's seed %d, of its mask"
            + " key %d%n",
        revealedSmall.size(), revealedLarge.size(), seedShares, maskKeyShares);

    // The docs' claim: at most one survivor statement is answered by honest clients.
    assertThat(revealedSmall.isEmpty() || revealedLarge.isEmpty())
        .as(
            "two survivor statements answered by honest clients: %d clients of the 12-roster and"
                + " %d of the 17-roster revealed, %d seed shares and %d mask-key shares of client 7",
            revealedSmall.size(), revealedLarge.size(), seedShares, maskKeyShares)
        .isTrue();
  }
}
