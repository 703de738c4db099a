package dev.privagg.secagg;

import dev.privagg.secagg.ClientSession.EncryptedShare;
import dev.privagg.secagg.ClientSession.RoutedShare;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;

/**
 * A simulated round of n clients and an honest job, phase by phase, with the job's routing: the
 * fixture of the end-to-end tests. Each phase takes which clients act in it, so a test drops
 * clients where it likes.
 */
final class SecAggCohort {
  final RoundContext ctx;
  final int n;
  final int degree;
  final int threshold;
  final int[] permutation;
  final int[][] neighbourhoods;
  final List<ClientSession> clients = new ArrayList<>();
  final List<AdvertisedKeys> roster = new ArrayList<>();
  private final Map<Integer, List<EncryptedShare>> shareKeys = new TreeMap<>();
  final Map<Integer, byte[]> maskedInputs = new TreeMap<>();

  /** r for the job's confirmation: the degree unless a test sets the roster's. */
  int rejectionLimit;

  /** After phase 3: who the receipts confirmed, and the cut pairs. */
  int[] confirmed;

  int[][] cuts = new int[0][];

  ShareConfirmation.Result confirmation;

  SecAggCohort(int n, int degree, int threshold, long seed) {
    this(n, degree, threshold, seed, null);
  }

  /** Clients that hold the Roster to {@code threat}'s graph for n ({@link ClientSession#start}). */
  static SecAggCohort checked(int n, ThreatModel threat, long seed) {
    RoundThresholds.Choice c = RoundThresholds.choose(n, threat).orElseThrow();
    return new SecAggCohort(n, c.neighbourhoodSize(), c.threshold(), seed, threat);
  }

  private SecAggCohort(int n, int degree, int threshold, long seed, ThreatModel threat) {
    Random random = new Random(seed);
    byte[] session = new byte[16];
    random.nextBytes(session);
    this.ctx = new RoundContext("cohort-job", 1 + random.nextInt(100), session);
    this.n = n;
    this.degree = degree;
    this.threshold = threshold;
    this.rejectionLimit = degree;
    this.neighbourhoods = new int[n][];
    SecureRandom secure = seeded(seed);
    for (int i = 0; i < n; i++) {
      ClientSession client =
          threat == null
              ? ClientSession.startUnchecked(ctx, "client-" + i, secure)
              : ClientSession.start(ctx, "client-" + i, threat, secure);
      clients.add(client);
      roster.add(client.advertise());
    }
    // The permutation the clients check: derived from the roster, the identity when complete.
    this.permutation =
        degree == n ? IntStream.range(0, n).toArray() : RosterPermutation.of(ctx, roster);
    HararyGraph graph = HararyGraph.ofNeighbourhoodSize(degree, permutation);
    for (int i = 0; i < n; i++) {
      neighbourhoods[i] = graph.neighbourhood(i);
    }
  }

  /** Phase 2: the clients in {@code sharing} send their ShareKeys; they form U2. */
  int[] shareKeys(IntPredicate sharing) {
    for (int i = 0; i < n; i++) {
      List<EncryptedShare> shares = clients.get(i).onRoster(roster, degree, threshold, permutation);
      if (sharing.test(i)) {
        shareKeys.put(i, shares);
      }
    }
    return shareKeys.keySet().stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * A client sending junk: its ciphertexts to the neighbours in {@code recipients} are replaced by
   * random bytes of the same length (well-formed, but they do not decrypt).
   */
  void junkSharesOf(int sender, IntPredicate recipients, Random random) {
    List<EncryptedShare> shares = new ArrayList<>(shareKeys.get(sender));
    for (int i = 0; i < shares.size(); i++) {
      if (recipients.test(shares.get(i).recipient())) {
        byte[] junk = new byte[shares.get(i).ciphertext().length];
        random.nextBytes(junk);
        shares.set(i, new EncryptedShare(shares.get(i).recipient(), junk));
      }
    }
    shareKeys.put(sender, shares);
  }

  /** The job's Shares message for {@code recipient}: what U2 addressed to it. */
  List<RoutedShare> routedTo(int recipient) {
    List<RoutedShare> routed = new ArrayList<>();
    shareKeys.forEach(
        (sender, shares) ->
            shares.stream()
                .filter(share -> share.recipient() == recipient)
                .forEach(
                    share ->
                        routed.add(
                            new RoutedShare(
                                sender, share.ciphertext(), clients.get(sender).commitments()))));
    return routed;
  }

  /**
   * Phase 3: the clients of U2 in {@code receipting} take their routed shares and send their
   * receipts; the job confirms ({@link ShareConfirmation}) and each confirmed client learns who it
   * masks with.
   */
  int[] confirm(IntPredicate receipting) {
    return confirm(receipting, i -> null);
  }

  /**
   * As above, where {@code lie} gives the receipt a client sends instead of its own (null: its
   * own): colluders and the one client more rejecting whom they like.
   */
  int[] confirm(IntPredicate receipting, IntFunction<int[]> lie) {
    boolean[] shared = new boolean[n];
    int[][] receipts = new int[n][];
    for (int i : shareKeys.keySet()) {
      shared[i] = true;
      if (receipting.test(i)) {
        clients.get(i).onShares(routedTo(i));
        int[] lied = lie.apply(i);
        receipts[i] = lied != null ? lied : clients.get(i).rejectedSenders();
      }
    }
    confirmation =
        ShareConfirmation.decide(
            n, i -> neighbourhoods[i], shared, receipts, threshold, rejectionLimit);
    confirmed = confirmation.confirmed();
    cuts = confirmation.cuts();
    for (int i : confirmed) {
      clients.get(i).onConfirmed(confirmed, cuts);
    }
    return confirmed;
  }

  /** Phase 4: the clients in {@code sending} (confirmed) mask their units; they form U3. */
  int[] maskedInputs(IntPredicate sending, long[][] units) {
    for (int i : confirmed != null ? confirmed : confirm(i -> true)) {
      if (sending.test(i)) {
        maskedInputs.put(i, clients.get(i).maskedInput(units[i]));
      }
    }
    return maskedInputs.keySet().stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * Phase 5: every client of U3 signs the survivor list {@code masked}; those whose guards refuse
   * do not sign.
   */
  Map<Integer, byte[]> sign(int[] shared, int[] masked) {
    Map<Integer, byte[]> signatures = new HashMap<>();
    for (int i : masked) {
      try {
        signatures.put(i, clients.get(i).signSurvivors(shared, masked));
      } catch (IllegalStateException refused) {
        // A client whose neighbourhood has fewer than t survivors stays silent.
      }
    }
    return signatures;
  }

  /**
   * Phases 4 to 6 after {@link #confirm}: every confirmed client masks, those in {@code responding}
   * answer, the job reconstructs; the number of masked inputs whose sum unmasked exactly, or -1.
   */
  int unmaskedExactly(long[][] units, IntPredicate responding, int dimension) {
    int[] masked = maskedInputs(i -> true, units);
    Unmasking.Result result = reconstruct(confirmed, masked, unmask(responding, confirmed, masked));
    if (result.correction().isEmpty()) {
      return -1;
    }
    long[] sum = sumOfMaskedInputs(dimension);
    result.correction().get().applyTo(sum, 0, dimension);
    return java.util.Arrays.equals(sum, plainSum(units, masked, dimension)) ? masked.length : -1;
  }

  /**
   * Phases 5 and 6, run honestly: U3 signs, then the clients in {@code responding} (within U3)
   * answer with every signature; those whose guards refuse do not answer.
   */
  Map<Integer, UnmaskShares> unmask(IntPredicate responding, int[] shared, int[] masked) {
    Map<Integer, byte[]> signatures = sign(shared, masked);
    Map<Integer, UnmaskShares> responses = new HashMap<>();
    for (int i : masked) {
      if (responding.test(i) && signatures.containsKey(i)) {
        try {
          responses.put(i, clients.get(i).unmask(signatures));
        } catch (IllegalStateException refused) {
          // Too few signatures: it reveals nothing.
        }
      }
    }
    return responses;
  }

  /**
   * Phases 5 and 6 as a lying server runs them: client i is shown the survivor list {@code
   * listOf(i)} (with {@code shared} as U2 and each client's own cuts as it confirmed them), signs
   * it, and is handed every signature there is: its fellows' (the clients shown the same list sign
   * the same statement) and the colluders', who sign whatever statement it needs. Only the clients
   * in {@code answering} are asked to unmask.
   *
   * @return each answering client's shares, or no entry where it refused (to sign or to unmask)
   */
  Map<Integer, UnmaskShares> answerLists(
      IntPredicate answering, IntFunction<int[]> listOf, int[] shared, IntPredicate colluding) {
    Map<Integer, byte[]> signatures = new HashMap<>();
    for (int i = 0; i < n; i++) {
      if (!colluding.test(i)) {
        try {
          signatures.put(i, clients.get(i).signSurvivors(shared, listOf.apply(i)));
        } catch (IllegalStateException | IllegalArgumentException refused) {
          // not a survivor, or a list its guards refuse
        }
      }
    }
    Map<Integer, UnmaskShares> answers = new HashMap<>();
    for (int i = 0; i < n; i++) {
      if (!answering.test(i) || colluding.test(i) || !signatures.containsKey(i)) {
        continue;
      }
      Map<Integer, byte[]> handed = new HashMap<>(signatures);
      byte[] statement = statementFor(shared, listOf.apply(i));
      for (int c = 0; c < n; c++) {
        if (colluding.test(c)) {
          handed.put(c, clients.get(c).signAsColluder(statement));
        }
      }
      try {
        answers.put(i, clients.get(i).unmask(handed));
      } catch (IllegalStateException refused) {
        // too few signatures on its statement
      }
    }
    return answers;
  }

  /** The survivor statement of list {@code masked}, with this cohort's roster, graph and cuts. */
  byte[] statementFor(int[] shared, int[] masked) {
    return SurvivorStatement.digest(
        ctx, roster, degree, threshold, permutation, shared, cuts, masked);
  }

  Unmasking.Result reconstruct(int[] shared, int[] masked, Map<Integer, UnmaskShares> responses) {
    return Unmasking.reconstruct(
        ctx, roster, neighbourhoods, threshold, shared, cuts, masked, commitments(), responses);
  }

  /** Each client's Feldman commitments, as its ShareKeys carried them; null before its roster. */
  IntFunction<byte[]> commitments() {
    return i -> {
      try {
        return clients.get(i).commitments();
      } catch (IllegalStateException noRoster) {
        return null;
      }
    };
  }

  /** The sum of U3's masked inputs, modulo 2^64. */
  long[] sumOfMaskedInputs(int d) {
    long[] sum = new long[d];
    for (byte[] bytes : maskedInputs.values()) {
      long[] words = words(bytes);
      for (int j = 0; j < d; j++) {
        sum[j] += words[j];
      }
    }
    return sum;
  }

  static long[] words(byte[] littleEndian) {
    long[] words = new long[littleEndian.length / 8];
    ByteBuffer.wrap(littleEndian).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(words);
    return words;
  }

  static long[] plainSum(long[][] units, int[] clients, int d) {
    long[] sum = new long[d];
    for (int i : clients) {
      for (int j = 0; j < d; j++) {
        sum[j] += units[i][j];
      }
    }
    return sum;
  }

  static IntPredicate allBut(int... dropped) {
    return i -> IntStream.of(dropped).noneMatch(x -> x == i);
  }

  /** A SecureRandom that repeats: SHA1PRNG seeded before first use is deterministic. */
  static SecureRandom seeded(long seed) {
    try {
      SecureRandom random = SecureRandom.getInstance("SHA1PRNG");
      random.setSeed(seed);
      return random;
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
