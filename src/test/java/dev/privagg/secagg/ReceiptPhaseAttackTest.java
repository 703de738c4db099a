package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The adversarial review of the receipt phase (issue 32). Each test is what a claim says should
 * hold; each failed before its fix.
 */
class ReceiptPhaseAttackTest {
  private static final ThreatModel DEFAULT_RATES =
      RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server");
  private static final int D = 4;

  /**
   * A lying server with ONE consistent Confirmed (fabricated cuts, no receipt asked for them) and
   * ONE consistent survivor list, and no colluding client at all: it cuts the target u from all but
   * t - 1 neighbours (u accepts cuts it never asked for), declares those t - 1 partners dropped
   * (their holders reveal their mask keys), and keeps the cut neighbours in U3 so that every
   * holder's "at least t of my neighbourhood in U3" guard passes (cut neighbours count as survivors
   * though they do not mask with u). It then strips u's masked input to u's update. Before the
   * receipt phase every survivor in u's neighbourhood masked with u, so a single consistent list
   * could not do this; the attack needs k + a + 1 >= 2t, so on the complete graph with n + A odd it
   * always works.
   */
  @Test
  void oneConsistentConfirmedWithFabricatedCuts_andOneSurvivorList_doNotRecoverAnInput() {
    // rates 0.3 / 0.1: the complete graph of 9, t = 5, A = 0 (no colluder needed at all)
    ThreatModel rates = RoundGraph.threatModel(0.3, 0.1, "semi-malicious-server");
    RoundThresholds.Choice c = RoundThresholds.choose(9, rates).orElseThrow();
    assertThat(c.complete()).isTrue();
    assertThat(c.threshold()).isEqualTo(5);
    assertThat(recoversByCuts(new SecAggCohort(9, 9, 5, 41), 0))
        .as("the server recovered client 0's update from one Confirmed and one survivor list")
        .isFalse();
  }

  @Test
  void theSameCutAttack_onTheSparseGraphOfTheDefaultRates_atSixClients() {
    // rates 0.1 / 0.1: n = 6 gets k = 5, t = 3, r = 0 (k + 1 = 2t, no colluder needed)
    RoundThresholds.Choice c = RoundThresholds.choose(6, DEFAULT_RATES).orElseThrow();
    assertThat(c.complete()).isFalse();
    SecAggCohort cohort = new SecAggCohort(6, c.neighbourhoodSize(), c.threshold(), 6);
    assertThat(recoversByCuts(cohort, 0)).isFalse();
  }

  @Test
  void aConfirmedCuttingMoreThanRPlusOnePairsAClientDidNotReject_isRefused() {
    // 12 clients at the default rates: k = 11, t = 7, r = 1 (one colluder may falsely complain,
    // and one client more: the client two neighbouring worlds differ by).
    SecAggCohort cohort = SecAggCohort.checked(12, DEFAULT_RATES, 12);
    cohort.shareKeys(i -> true);
    int me = 0;
    ClientSession client = cohort.clients.get(me);
    client.onShares(cohort.routedTo(me));
    int[] others = IntStream.of(cohort.neighbourhoods[me]).filter(v -> v != me).toArray();
    int[] everyone = IntStream.range(0, 12).toArray();

    assertThatThrownBy(
            () ->
                client.onConfirmed(
                    everyone, new int[][] {{me, others[0]}, {me, others[1]}, {me, others[2]}}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "client-0: the job cuts 3 of its pairs, more than the 2 misbehaving clients its"
                + " neighbourhood may hold (r = 1 colluders and one client more); no masked input"
                + " is sent");
    client.onConfirmed(everyone, new int[][] {{me, others[0]}, {me, others[1]}});
    assertThat(client.maskedInput(new long[D])).hasSize(8 * D);
  }

  /**
   * The lie: one Confirmed (everyone, target cut from all its neighbours but t - 1 partners) and
   * one survivor list (everyone but those partners), both the same for every client.
   */
  private static boolean recoversByCuts(SecAggCohort cohort, int target) {
    int n = cohort.n;
    int t = cohort.threshold;
    long[][] units = units(n, 7);
    cohort.shareKeys(i -> true);
    int[] everyone = IntStream.range(0, n).toArray();
    for (int i = 0; i < n; i++) {
      cohort.clients.get(i).onShares(cohort.routedTo(i));
      assertThat(cohort.clients.get(i).rejectedSenders()).isEmpty(); // honest receipts
    }
    int[] others = IntStream.of(cohort.neighbourhoods[target]).filter(v -> v != target).toArray();
    int[] partners = Arrays.copyOf(others, t - 1);
    int[][] cuts =
        IntStream.of(others)
            .skip(t - 1)
            .mapToObj(v -> new int[] {Math.min(v, target), Math.max(v, target)})
            .toArray(int[][]::new);
    for (int i = 0; i < n; i++) {
      cohort.clients.get(i).onConfirmed(everyone, cuts);
    }
    byte[][] masked = new byte[n][];
    for (int i = 0; i < n; i++) {
      masked[i] = cohort.clients.get(i).maskedInput(units[i]);
    }
    int[] u3 =
        IntStream.range(0, n).filter(i -> IntStream.of(partners).noneMatch(p -> p == i)).toArray();
    List<Shamir.Share> seed = new ArrayList<>();
    java.util.Map<Integer, List<Shamir.Share>> keys = new java.util.HashMap<>();
    cohort.cuts = cuts;
    java.util.Map<Integer, UnmaskShares> answers =
        cohort.answerLists(i -> true, i -> u3, everyone, i -> false);
    for (int h : u3) {
      UnmaskShares answer = answers.get(h);
      if (answer == null) {
        continue;
      }
      for (UnmaskShares.RevealedShare r : answer.selfMaskShares()) {
        if (r.index() == target) {
          seed.add(new Shamir.Share(h + 1, r.share()));
        }
      }
      for (UnmaskShares.RevealedShare r : answer.maskKeyShares()) {
        keys.computeIfAbsent(r.index(), k -> new ArrayList<>())
            .add(new Shamir.Share(h + 1, r.share()));
      }
    }
    if (seed.size() < t) {
      return false;
    }
    long[] y = SecAggCohort.words(masked[target]);
    byte[] b = Shamir.reconstruct(seed, t);
    new MaskStream(DerivedKeys.selfMaskKey(cohort.ctx, b, target)).addTo(y, 0, D, -1);
    for (int w : partners) {
      List<Shamir.Share> shares = keys.getOrDefault(w, List.of());
      if (shares.size() < t) {
        return false;
      }
      byte[] sk = Shamir.reconstruct(shares, t);
      byte[] key =
          DerivedKeys.pairwiseMaskKey(
              cohort.ctx, sk, w, cohort.roster.get(target).maskPublicKey(), target);
      new MaskStream(key).addTo(y, 0, D, target < w ? -1 : 1);
    }
    return Arrays.equals(y, units[target]);
  }

  /**
   * Shares that decrypt but are no scalar below l, or are scalars off the polynomial the sender's
   * commitments state (a consistent sharing of another secret, or values on no common polynomial),
   * are on the recipient's receipt, so the dealer leaves or the pair is cut before anyone masks:
   * before verifiable secret sharing the second kind passed the receipt and spoiled the unmasking.
   */
  @Test
  void sharesThatDecryptButFailTheCommitments_areOnTheReceipt() throws ForgedShareException {
    SecureRandom random = SecAggCohort.seeded(3);
    RoundContext ctx = new RoundContext("job", 1, new byte[16]);
    X25519Keys enc0 = X25519Keys.generate(random);
    List<ClientSession> sessions = new ArrayList<>();
    List<AdvertisedKeys> roster = new ArrayList<>();
    sessions.add(
        new ClientSession(
            ctx,
            "liar",
            null,
            random,
            enc0,
            MaskKeys.generate(random),
            Edwards25519.scalarBytes(java.math.BigInteger.TEN),
            SigningKeys.generate(random)));
    for (int i = 1; i < 4; i++) {
      sessions.add(ClientSession.startUnchecked(ctx, "client-" + i, random));
    }
    for (ClientSession s : sessions) {
      roster.add(s.advertise());
    }
    int[] identity = {0, 1, 2, 3};
    List<ClientSession.EncryptedShare> sent = sessions.get(0).onRoster(roster, 4, 2, identity);
    for (ClientSession s : sessions.subList(1, 4)) {
      s.onRoster(roster, 4, 2, identity);
    }
    byte[] digest = RosterDigest.of(ctx, roster, 4, 2, identity);
    byte[] commitments = sessions.get(0).commitments();
    // To client 1: 0xFF bytes, no scalar. To client 2: a fresh sharing of another seed (consistent,
    // but not of the advertised one). To client 3: the honest shares, which must still pass.
    byte[] junk = new byte[ShareCipher.PLAINTEXT_BYTES];
    Arrays.fill(junk, (byte) 0xFF);
    byte[][] otherSeed =
        Shamir.Polynomial.random(Edwards25519.scalarBytes(java.math.BigInteger.TWO), 2, random)
            .sharesAt(new int[] {3});
    byte[] honestToClient2 = opened(ctx, enc0, roster, digest, sent, 2);
    byte[] offPolynomial =
        Bytes.concat(Arrays.copyOfRange(honestToClient2, 0, Shamir.SHARE_BYTES), otherSeed[0]);
    for (int recipient = 1; recipient < 4; recipient++) {
      byte[] plaintext =
          recipient == 1
              ? junk
              : recipient == 2 ? offPolynomial : opened(ctx, enc0, roster, digest, sent, 3);
      byte[] key =
          DerivedKeys.shareEncryptionKey(
              ctx, enc0.privateKey(), 0, roster.get(recipient).encryptionPublicKey(), recipient);
      byte[] sealed = ShareCipher.encrypt(key, ctx, 0, recipient, digest, plaintext, new Random(1));
      sessions
          .get(recipient)
          .onShares(List.of(new ClientSession.RoutedShare(0, sealed, commitments)));
    }

    assertThat(sessions.get(1).rejectedSenders()).as("no scalar").containsExactly(0);
    assertThat(sessions.get(2).rejectedSenders())
        .as("a scalar off the committed polynomial of the advertised seed")
        .containsExactly(0);
    assertThat(sessions.get(3).rejectedSenders()).as("the dealer's honest shares").isEmpty();
  }

  /** The plaintext client 0 (encryption keys {@code enc0}) sealed for {@code recipient}. */
  private static byte[] opened(
      RoundContext ctx,
      X25519Keys enc0,
      List<AdvertisedKeys> roster,
      byte[] digest,
      List<ClientSession.EncryptedShare> sent,
      int recipient)
      throws ForgedShareException {
    byte[] key =
        DerivedKeys.shareEncryptionKey(
            ctx, enc0.privateKey(), 0, roster.get(recipient).encryptionPublicKey(), recipient);
    ClientSession.EncryptedShare share =
        sent.stream().filter(e -> e.recipient() == recipient).findFirst().orElseThrow();
    return ShareCipher.decrypt(key, ctx, 0, recipient, digest, share.ciphertext());
  }

  private static long[][] units(int n, long seed) {
    Random random = new Random(seed);
    long[][] units = new long[n][D];
    for (long[] u : units) {
      for (int j = 0; j < D; j++) {
        u[j] = random.nextInt(1 << 20) - (1 << 19);
      }
    }
    return units;
  }
}
