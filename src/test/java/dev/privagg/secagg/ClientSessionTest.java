package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.secagg.ClientSession.EncryptedShare;
import dev.privagg.secagg.ClientSession.FailedShare;
import dev.privagg.secagg.ClientSession.RoutedShare;
import dev.privagg.secagg.UnmaskShares.RevealedShare;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** One client's state machine: what it sends in each phase and what it refuses. */
class ClientSessionTest {
  private static final int N = 9;
  private static final int DEGREE = 5;
  private static final int THRESHOLD = 3;

  private final SecAggCohort cohort = new SecAggCohort(N, DEGREE, THRESHOLD, 77);

  @Test
  void onRoster_findsItsIndexByItsKey_andEncryptsOneShareForEachOtherNeighbour() {
    ClientSession client = cohort.clients.get(4);

    List<EncryptedShare> shares =
        client.onRoster(cohort.roster, DEGREE, THRESHOLD, cohort.permutation);

    assertThat(client.index()).isEqualTo(4);
    assertThat(shares)
        .extracting(EncryptedShare::recipient)
        .containsExactly(
            IntStream.of(cohort.neighbourhoods[4])
                .filter(v -> v != 4)
                .boxed()
                .toArray(Integer[]::new));
    assertThat(shares)
        .allSatisfy(share -> assertThat(share.ciphertext()).hasSize(ShareCipher.CIPHERTEXT_BYTES));
  }

  @Test
  void onRoster_refusesARosterWithoutItsKeyWithItTwiceOrWithItsKeyBesideOtherKeys() {
    ClientSession client = cohort.clients.get(0);
    List<AdvertisedKeys> without = new ArrayList<>(cohort.roster);
    without.set(0, cohort.roster.get(1));
    List<AdvertisedKeys> twice = new ArrayList<>(cohort.roster);
    twice.set(5, cohort.roster.get(0));
    List<AdvertisedKeys> altered = new ArrayList<>(cohort.roster);
    AdvertisedKeys own = cohort.roster.get(0);
    altered.set(
        0,
        new AdvertisedKeys(
            own.encryptionPublicKey(),
            cohort.roster.get(1).maskPublicKey(),
            own.selfMaskCommitment(),
            own.signingPublicKey()));

    assertThatThrownBy(() -> client.onRoster(without, DEGREE, THRESHOLD, cohort.permutation))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("client-0: its encryption key is not in the roster");
    assertThatThrownBy(() -> client.onRoster(twice, DEGREE, THRESHOLD, cohort.permutation))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("client-0: its encryption key appears twice in the roster, at 0 and 5");
    assertThatThrownBy(() -> client.onRoster(altered, DEGREE, THRESHOLD, cohort.permutation))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("client-0: roster entry 0 has its encryption key but other keys");
  }

  @Test
  void onRoster_refusesARingTheRostersKeysDoNotDerive_soNoServerSeatsColludersAroundIt() {
    ClientSession client = cohort.clients.get(0);
    int[] chosen = cohort.permutation.clone();
    int swap = chosen[0];
    chosen[0] = chosen[1];
    chosen[1] = swap;

    assertThatThrownBy(() -> client.onRoster(cohort.roster, DEGREE, THRESHOLD, chosen))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "client-0: the roster's permutation is not the one its keys derive");
    // The complete graph is the same under any permutation: nothing to check.
    SecAggCohort complete = new SecAggCohort(4, 4, 3, 5);
    assertThat(complete.clients.get(0).onRoster(complete.roster, 4, 3, new int[] {3, 1, 2, 0}))
        .hasSize(3);
  }

  @Test
  void onRoster_refusesAGraphTheJobsRatesDoNotGiveTheRostersSize() {
    // A server that states t = 1 would have every honest answer hand over a self-mask seed.
    ThreatModel rates = RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server");
    RoundThresholds.Choice right = RoundThresholds.choose(N, rates).orElseThrow();
    SecAggCohort checked = new SecAggCohort(N, right.neighbourhoodSize(), right.threshold(), 8);
    RoundContext ctx = checked.ctx;
    ClientSession client = ClientSession.start(ctx, "client-9", rates, SecAggCohort.seeded(9));
    List<AdvertisedKeys> roster = new ArrayList<>(checked.roster);
    roster.set(0, client.advertise());
    int[] ring =
        right.complete() ? IntStream.range(0, N).toArray() : RosterPermutation.of(ctx, roster);

    assertThatThrownBy(() -> client.onRoster(roster, right.neighbourhoodSize(), 1, ring))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "client-9: the roster states k = "
                + right.neighbourhoodSize()
                + ", t = 1 for 9 clients, but "
                + rates
                + " gives k = "
                + right.neighbourhoodSize()
                + ", t = "
                + right.threshold());
    assertThat(client.onRoster(roster, right.neighbourhoodSize(), right.threshold(), ring))
        .hasSize(right.neighbourhoodSize() - 1);
  }

  @Test
  void maskedInput_isRefused_whenFewerThanTMinusOneNeighboursSharesWereRouted() {
    // A server that routes a client no shares would leave its self-mask alone over its update,
    // and gather that from the seed shares its neighbours reveal (Bonawitz et al.'s |U2| >= t).
    ClientSession client = cohort.clients.get(0);
    client.onRoster(cohort.roster, DEGREE, THRESHOLD, cohort.permutation);
    client.onShares(List.of());
    client.onConfirmed(new int[] {0}, new int[0][]);

    assertThatThrownBy(() -> client.maskedInput(new long[] {1, 2, 3}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "client-0: only 0 confirmed partners, fewer than the threshold 3 - 1; no masked input"
                + " is sent");
  }

  @Test
  void onConfirmed_refusesWhatWouldMaskWithoutAShareOrWithAStranger_andAClientNotConfirmed() {
    cohort.shareKeys(i -> true);
    int me = 0;
    int[] others = IntStream.of(cohort.neighbourhoods[me]).filter(v -> v != me).toArray();
    List<RoutedShare> routed = new ArrayList<>(cohort.routedTo(me));
    int junkSender = routed.get(0).sender();
    byte[] junk = routed.get(0).ciphertext();
    junk[30] ^= 1;
    routed.set(0, new RoutedShare(junkSender, junk, routed.get(0).commitments()));
    int notRouted = routed.get(1).sender();
    routed.remove(1);
    ClientSession client = cohort.clients.get(me);
    client.onShares(routed);
    int[] everyone = IntStream.range(0, N).toArray();
    int[] withoutNotRouted = IntStream.range(0, N).filter(v -> v != notRouted).toArray();

    assertThat(client.rejectedSenders()).containsExactly(junkSender);
    assertThatThrownBy(() -> client.onConfirmed(withoutNotRouted, new int[0][]))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "client-0: the job confirms neighbour "
                + junkSender
                + ", whose share did not decrypt here, without cutting the pair");
    assertThatThrownBy(() -> client.onConfirmed(everyone, new int[][] {{me, junkSender}}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "client-0: the job confirms neighbour "
                + notRouted
                + ", whose shares were not routed here");
    assertThatThrownBy(() -> client.onConfirmed(IntStream.range(1, N).toArray(), new int[0][]))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("client-0: not confirmed for round ");
    assertThatThrownBy(() -> client.onConfirmed(everyone, new int[][] {{me, me}}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cuts must hold pairs of two distinct roster indices in [0, 9), found [0, 0]");

    // Cut with the junk sender, without the one never routed: it masks with the rest.
    client.onConfirmed(withoutNotRouted, new int[][] {{junkSender, me}});
    assertThat(others).contains(junkSender, notRouted);
    assertThat(client.maskedInput(new long[] {1, 2})).hasSize(16);
  }

  @Test
  void onRoster_refusesAThresholdAboveTheDegreeAndAPermutationOfAnotherSize() {
    ClientSession client = cohort.clients.get(0);

    assertThatThrownBy(() -> client.onRoster(cohort.roster, DEGREE, 6, cohort.permutation))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threshold must be in [1, 5] (the degree), was 6");
    assertThatThrownBy(() -> client.onRoster(cohort.roster, DEGREE, 0, cohort.permutation))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threshold must be in [1, 5] (the degree), was 0");
    assertThatThrownBy(() -> client.onRoster(cohort.roster, DEGREE, 3, new int[] {0, 1, 2}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("permutation must have one entry per roster entry (9), had 3");
    assertThatThrownBy(() -> client.onRoster(cohort.roster, 4, 3, cohort.permutation))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the neighbourhood size must be odd and in [1, 9), or 9 (the complete graph), was 4");
  }

  @Test
  void onShares_reportsStrangersRepeatsAndForgeries_andKeepsTheRest() {
    cohort.shareKeys(i -> true);
    int me = 0;
    int[] neighbours = IntStream.of(cohort.neighbourhoods[me]).filter(v -> v != me).toArray();
    int stranger =
        IntStream.range(0, N)
            .filter(v -> !contains(cohort.neighbourhoods[me], v))
            .min()
            .orElseThrow();
    List<RoutedShare> honest = cohort.routedTo(me);
    RoutedShare first = honest.get(0);
    byte[] forged = honest.get(1).ciphertext();
    forged[20] ^= 1;
    List<RoutedShare> routed = new ArrayList<>(honest);
    routed.set(1, new RoutedShare(honest.get(1).sender(), forged, first.commitments()));
    routed.add(first);
    routed.add(new RoutedShare(stranger, first.ciphertext(), first.commitments()));
    routed.add(new RoutedShare(me, first.ciphertext(), first.commitments()));
    routed.add(new RoutedShare(99, first.ciphertext(), first.commitments()));

    List<FailedShare> failed = cohort.clients.get(me).onShares(routed);

    assertThat(failed)
        .containsExactly(
            new FailedShare(
                honest.get(1).sender(),
                "forged share from sender "
                    + honest.get(1).sender()
                    + " to recipient 0: the GCM tag does not verify"),
            new FailedShare(first.sender(), "sender " + first.sender() + " appears more than once"),
            new FailedShare(stranger, "sender " + stranger + " is not a neighbour of 0"),
            new FailedShare(me, "sender 0 is not a neighbour of 0"),
            new FailedShare(99, "sender 99 is not in the roster of 9"));
    // The forged sender is on the receipt; confirmed with the pair cut, its share is not held.
    assertThat(cohort.clients.get(me).rejectedSenders()).containsExactly(honest.get(1).sender());
    int[] everyone = IntStream.range(0, N).toArray();
    cohort.cuts = new int[][] {{me, honest.get(1).sender()}};
    cohort.clients.get(me).onConfirmed(everyone, cohort.cuts);
    cohort.clients.get(me).maskedInput(new long[3]);
    UnmaskShares revealed = unmaskAlone(me, everyone, everyone);
    assertThat(revealed.selfMaskShares())
        .extracting(RevealedShare::index)
        .containsExactlyInAnyOrder(
            IntStream.concat(
                    IntStream.of(me),
                    IntStream.of(neighbours).filter(v -> v != honest.get(1).sender()))
                .boxed()
                .toArray(Integer[]::new));
  }

  @Test
  void maskedInput_isComputedOnce_theSameUnitsGiveTheSameBytes_otherUnitsAreRefused() {
    cohort.shareKeys(i -> true);
    ClientSession client = cohort.clients.get(2);
    assertThatThrownBy(() -> client.maskedInput(new long[] {1, 2}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("client-2: maskedInput is for phase MASK, but the session is at SHARE");
    client.onShares(cohort.routedTo(2));
    assertThatThrownBy(() -> client.maskedInput(new long[] {1, 2}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("client-2: maskedInput is for phase MASK, but the session is at CONFIRM");
    client.onConfirmed(IntStream.range(0, N).toArray(), new int[0][]);

    byte[] first = client.maskedInput(new long[] {1, 2});

    assertThat(first).hasSize(16);
    assertThat(client.maskedInput(new long[] {1, 2})).isEqualTo(first);
    assertThatThrownBy(() -> client.maskedInput(new long[] {1, 3}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("client-2: a masked input of other units was already computed in this session");
  }

  @Test
  void unmask_revealsSeedSharesOfSurvivorsAndKeySharesOfDropouts_ownSeedShareIncluded() {
    int me = 0;
    int dropped =
        IntStream.of(cohort.neighbourhoods[me]).filter(v -> v != me).findFirst().orElseThrow();
    int[] shared = cohort.shareKeys(i -> true);
    int[] masked = cohort.maskedInputs(SecAggCohort.allBut(dropped), new long[N][4]);
    Map<Integer, byte[]> signatures = cohort.sign(shared, masked);

    UnmaskShares revealed = cohort.clients.get(me).unmask(signatures);

    assertThat(revealed.selfMaskShares())
        .extracting(RevealedShare::index)
        .containsExactly(
            IntStream.of(cohort.neighbourhoods[me])
                .filter(v -> v != dropped)
                .boxed()
                .toArray(Integer[]::new));
    assertThat(revealed.maskKeyShares()).extracting(RevealedShare::index).containsExactly(dropped);
    assertThat(cohort.clients.get(me).unmask(signatures)).isSameAs(revealed);
  }

  @Test
  void signSurvivors_refusesWhatCouldRevealBothSharesOfANeighbourOrTooLittle() {
    int me = 0;
    int[] others = IntStream.of(cohort.neighbourhoods[me]).filter(v -> v != me).toArray();
    int[] shared = cohort.shareKeys(SecAggCohort.allBut());
    ClientSession client = cohort.clients.get(me);
    int[] everyone = IntStream.range(0, N).toArray();
    assertThatThrownBy(() -> client.signSurvivors(everyone, everyone))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("client-0: survivors before sending a masked input");
    assertThatThrownBy(() -> client.unmask(Map.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("client-0: unmask before signing a survivor list");
    cohort.maskedInputs(i -> true, new long[N][4]);
    int[] withoutMe = IntStream.range(1, N).toArray();
    int[] withoutTwoNeighbours =
        IntStream.range(0, N)
            .filter(v -> v != others[0] && v != others[1] && v != others[2])
            .toArray();
    int[] withoutOneNeighbour = IntStream.range(0, N).filter(v -> v != others[0]).toArray();
    int stranger =
        IntStream.range(0, N)
            .filter(v -> !contains(cohort.neighbourhoods[me], v))
            .findFirst()
            .orElseThrow();
    int[] withoutStranger = IntStream.range(0, N).filter(v -> v != stranger).toArray();

    assertThatThrownBy(() -> client.signSurvivors(shared, withoutMe))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("client-0: not in maskedInput (U3), though it sent its masked input");
    assertThatThrownBy(() -> client.signSurvivors(withoutOneNeighbour, withoutOneNeighbour))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "client-0: shared (U2) is not the round's Confirmed, which this client masked by");
    // U2 is the whole Confirmed: a difference far from this client changes what all sign.
    assertThatThrownBy(() -> client.signSurvivors(withoutStranger, withoutStranger))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "client-0: shared (U2) is not the round's Confirmed, which this client masked by");
    assertThatThrownBy(() -> client.signSurvivors(shared, withoutTwoNeighbours))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "client-0: only 2 of its neighbourhood are in maskedInput (U3), fewer than the"
                + " threshold 3");
    assertThatThrownBy(() -> client.signSurvivors(shared, new int[] {0, 0}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maskedInput must hold distinct roster indices in [0, 9), found 0");

    byte[] signature = client.signSurvivors(shared, everyone);
    int[] reversed = IntStream.range(0, N).map(i -> N - 1 - i).toArray();
    assertThat(client.signSurvivors(shared, reversed)).isEqualTo(signature);
    assertThatThrownBy(() -> client.signSurvivors(shared, withoutOneNeighbour))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("client-0: already signed the survivor list ")
        .hasMessageEndingWith("; it signs one list per session");
  }

  @Test
  void unmask_needsAMajorityOfValidSignaturesFromU3OnItsOwnStatement_othersDoNotCount() {
    int me = 0;
    int[] shared = cohort.shareKeys(i -> true);
    int[] everyone = cohort.maskedInputs(i -> true, new long[N][4]);
    Map<Integer, byte[]> all = cohort.sign(shared, everyone);
    int needed = N / 2 + 1; // unchecked sessions: no colluders declared
    Map<Integer, byte[]> tooFew = new java.util.TreeMap<>();
    for (int i = 0; i < needed - 1; i++) {
      tooFew.put(i, all.get(i));
    }
    // Junk, a signature under another index, one from outside the roster, one of another list.
    Map<Integer, byte[]> padded = new java.util.TreeMap<>(tooFew);
    padded.put(needed - 1, new byte[64]);
    padded.put(needed, all.get(0));
    padded.put(-1, all.get(1));
    padded.put(N, all.get(2));
    int[] otherList = IntStream.range(0, N - 1).toArray();
    padded.put(
        needed + 1,
        cohort.clients.get(needed + 1).signAsColluder(cohort.statementFor(shared, otherList)));
    padded.put(needed + 2, new byte[3]);

    assertThatThrownBy(() -> cohort.clients.get(me).unmask(padded))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "client-0: only "
                + (needed - 1)
                + " survivors signed the survivor list it signed, fewer than "
                + needed
                + " ((n + A) / 2 + 1): another list may have been shown to others, so it reveals"
                + " nothing");
    Map<Integer, byte[]> enough = new java.util.TreeMap<>(padded);
    enough.put(needed - 1, all.get(needed - 1));
    assertThat(cohort.clients.get(me).unmask(enough).selfMaskShares()).isNotEmpty();
  }

  /** Signs and unmasks one client with everyone's signatures on its own list (all honest). */
  private UnmaskShares unmaskAlone(int me, int[] shared, int[] masked) {
    byte[] statement = cohort.statementFor(shared, masked);
    cohort.clients.get(me).signSurvivors(shared, masked);
    Map<Integer, byte[]> signatures = new java.util.HashMap<>();
    for (int i = 0; i < N; i++) {
      signatures.put(i, cohort.clients.get(i).signAsColluder(statement));
    }
    return cohort.clients.get(me).unmask(signatures);
  }

  private static boolean contains(int[] sorted, int v) {
    return IntStream.of(sorted).anyMatch(x -> x == v);
  }
}
