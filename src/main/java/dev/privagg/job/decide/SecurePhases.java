package dev.privagg.job.decide;

import dev.privagg.avro.Commitments;
import dev.privagg.avro.Confirmed;
import dev.privagg.avro.Consistency;
import dev.privagg.avro.CutPair;
import dev.privagg.avro.DistributedNoise;
import dev.privagg.avro.EncryptedShare;
import dev.privagg.avro.Opened;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RevealedShare;
import dev.privagg.avro.Roster;
import dev.privagg.avro.RosterEntry;
import dev.privagg.avro.RoutedShare;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.SecureRound;
import dev.privagg.avro.ShareKeys;
import dev.privagg.avro.Shares;
import dev.privagg.avro.SignedSurvivors;
import dev.privagg.avro.Survivors;
import dev.privagg.avro.UnmaskShares;
import dev.privagg.distributed.DistributedNoisePlan;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.job.OpenRound;
import dev.privagg.job.SecureRoundState;
import dev.privagg.job.SecureUpdate;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.secagg.AdvertisedKeys;
import dev.privagg.secagg.ClientSession;
import dev.privagg.secagg.FeldmanCommitments;
import dev.privagg.secagg.HararyGraph;
import dev.privagg.secagg.RoundGraph;
import dev.privagg.secagg.RoundThresholds;
import dev.privagg.secagg.ShareConfirmation;
import dev.privagg.secagg.SigningKeys;
import dev.privagg.secagg.SurvivorStatement;
import dev.privagg.spec.JobSpec;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * The phases of a secure-aggregation round at the decider (docs/secure-aggregation.md): draws the
 * session when the round opens, takes each phase's messages in its window, and at each phase
 * deadline writes what the clients need next (roster, their encrypted shares, the survivors). Which
 * client joins the roster is the lifecycle's admission (round, duplicates, participation, sampling,
 * the cap), applied to its advertised keys; the unmasking at the round's deadline is {@link
 * SecureUnmasking}'s.
 *
 * <p>Phases end on event-time timers one millisecond before each deadline, as rounds do: a message
 * belongs to a phase iff its broker time is before the phase's deadline.
 */
final class SecurePhases {
  private final JobSpec spec;
  private final SecureRandom random;

  SecurePhases(JobSpec spec, SecureRandom random) {
    this.spec = spec;
    this.random = random;
  }

  /** The round opened: a fresh session, the phase deadlines, and the Opened message. */
  void open(
      RoundStore store,
      long round,
      long opensAt,
      long deadline,
      double clipNorm,
      RoundDecisions out) {
    JobSpec.Aggregation a = spec.aggregation();
    SecureRoundState s = new SecureRoundState();
    s.round = round;
    s.session = new byte[16];
    random.nextBytes(s.session);
    // Counted back from the deadline: a round longer than the timeout (round 1's start grace)
    // gives the extra time to phase 1, while the job comes up and clients learn the session.
    long unmaskMillis =
        spec.rounds().timeoutMillis()
            - a.advertiseMillis()
            - a.shareMillis()
            - a.confirmMillis()
            - a.maskedInputMillis()
            - a.consistencyMillis();
    s.unmaskDeadlineMillis = deadline;
    s.consistencyDeadlineMillis = deadline - unmaskMillis;
    s.maskedInputDeadlineMillis = s.consistencyDeadlineMillis - a.consistencyMillis();
    s.confirmDeadlineMillis = s.maskedInputDeadlineMillis - a.maskedInputMillis();
    s.shareDeadlineMillis = s.confirmDeadlineMillis - a.confirmMillis();
    s.advertiseDeadlineMillis = s.shareDeadlineMillis - a.shareMillis();
    s.clipNorm = clipNorm;
    s.maskedWordBits = spec.maskedWordBits();
    s.maskedDimension = spec.maskedDimension();
    s.distributedPlan = planOf(spec);
    s.phase = SecureUpdate.ADVERTISE;
    store.saveSecureRound(s);
    out.secureRound(
        message(
            s,
            new Opened(
                s.advertiseDeadlineMillis,
                s.shareDeadlineMillis,
                s.confirmDeadlineMillis,
                s.maskedInputDeadlineMillis,
                s.consistencyDeadlineMillis,
                s.unmaskDeadlineMillis,
                clipNorm,
                distributedNoise(spec.distributedNoise()))));
    rearm(store, out);
  }

  /** The distributed-noise plan a round's clients encode with, as state records it; "" for none. */
  static String planOf(JobSpec spec) {
    return spec.distributedNoise() == null ? "" : spec.distributedNoise().toString();
  }

  /** The plan as the Opened message states it, or null without distributed noise. */
  static DistributedNoise distributedNoise(DistributedNoisePlan plan) {
    return plan == null
        ? null
        : new DistributedNoise(
            plan.bits(),
            plan.dimension(),
            plan.paddedDimension(),
            plan.unitsPerClipNorm(),
            plan.maxSquaredNorm(),
            plan.varianceNumerator(),
            plan.varianceDenominator(),
            plan.noiseShares());
  }

  /** Registers the timers of the phases still to end (a drain's savepoint holds none). */
  void rearm(RoundStore store, RoundDecisions out) {
    SecureRoundState s = store.secureRound();
    if (s == null) {
      return;
    }
    long[] deadlines = {
      s.advertiseDeadlineMillis,
      s.shareDeadlineMillis,
      s.confirmDeadlineMillis,
      s.maskedInputDeadlineMillis,
      s.consistencyDeadlineMillis
    };
    for (int phase = s.phase; phase <= SecureUpdate.CONSISTENCY; phase++) {
      out.registerTimer(deadlines[phase - 1] - 1);
    }
  }

  /** Ends every phase whose deadline is at most {@code eventTime + 1}. */
  void phasesDue(RoundStore store, long eventTime, RoundDecisions out) {
    SecureRoundState s = store.secureRound();
    if (s == null) {
      return;
    }
    boolean changed = false;
    while (s.phase <= SecureUpdate.CONSISTENCY && deadline(s, s.phase) <= eventTime + 1) {
      switch (s.phase) {
        case SecureUpdate.ADVERTISE -> closeRoster(s, out);
        case SecureUpdate.SHARE -> routeShares(s, out);
        case SecureUpdate.CONFIRM -> confirm(s, out);
        case SecureUpdate.MASKED_INPUT -> announceSurvivors(s, out);
        default -> publishSignatures(s, out);
      }
      // A roster too small for any graph skips to the end: the round carries no sum.
      s.phase = s.degree == 0 ? SecureUpdate.UNMASK + 1 : s.phase + 1;
      changed = true;
    }
    if (changed) {
      store.saveSecureRound(s);
    }
  }

  private static long deadline(SecureRoundState s, int phase) {
    return switch (phase) {
      case SecureUpdate.ADVERTISE -> s.advertiseDeadlineMillis;
      case SecureUpdate.SHARE -> s.shareDeadlineMillis;
      case SecureUpdate.CONFIRM -> s.confirmDeadlineMillis;
      case SecureUpdate.MASKED_INPUT -> s.maskedInputDeadlineMillis;
      case SecureUpdate.CONSISTENCY -> s.consistencyDeadlineMillis;
      default -> s.unmaskDeadlineMillis;
    };
  }

  /**
   * Whether {@code update} may be taken now: the round's session and the phase it is for, before
   * that phase's deadline. Otherwise it is rejected with the reason.
   */
  boolean inWindow(RoundStore store, SecureUpdate update, long time, RoundDecisions out) {
    SecureRoundState s = store.secureRound();
    if (s == null || !Arrays.equals(s.session, update.session)) {
      out.reject(
          update,
          RejectReason.SECURE_PROTOCOL,
          "session is not round " + update.round + "'s (read it from the round's Opened message)");
      return false;
    }
    // Decided at once when read after event time passed its broker time (the broker's clock
    // stepped back): its phase window is still its broker time's, as when decided in its turn.
    boolean beforeItsPhase =
        update.phase == s.phase
            && update.phase > SecureUpdate.ADVERTISE
            && time < deadline(s, update.phase - 1);
    if (update.phase != s.phase || time >= deadline(s, update.phase) || beforeItsPhase) {
      out.reject(
          update,
          RejectReason.SECURE_PROTOCOL,
          "a phase "
              + update.phase
              + " message at broker time "
              + time
              + (beforeItsPhase
                  ? ", before round "
                      + s.round
                      + "'s phase "
                      + update.phase
                      + " opened at "
                      + deadline(s, update.phase - 1)
                  : ", while round "
                      + s.round
                      + " takes phase "
                      + s.phase
                      + (s.phase <= SecureUpdate.UNMASK
                          ? " until " + deadline(s, s.phase)
                          : " no more")
                      + " messages"));
      return false;
    }
    if (update.phase == SecureUpdate.ADVERTISE && advertisedBefore(s, update)) {
      // Clients find their roster index by this key: two entries with it would share an index.
      out.reject(
          update,
          RejectReason.SECURE_PROTOCOL,
          "its encryption public key is already on round " + s.round + "'s roster");
      return false;
    }
    return true;
  }

  private static boolean advertisedBefore(SecureRoundState s, SecureUpdate update) {
    var keys = (dev.privagg.avro.AdvertiseKeys) decode(update).getBody();
    byte[] key = new byte[32];
    keys.getEncryptionPublicKey().duplicate().get(key);
    return s.hasEncryptionKey(key);
  }

  /** An admitted client's advertised keys join the roster. */
  void join(RoundStore store, SecureUpdate update, String clientKey, String shardKey) {
    SecureRoundState s = store.secureRound();
    var keys = (dev.privagg.avro.AdvertiseKeys) decode(update).getBody();
    byte[] entry = new byte[AdvertisedKeys.ENTRY_BYTES];
    keys.getEncryptionPublicKey().duplicate().get(entry, 0, 32);
    keys.getMaskPublicKey().duplicate().get(entry, 32, 32);
    keys.getSelfMaskCommitment().duplicate().get(entry, 64, 32);
    keys.getSigningPublicKey().duplicate().get(entry, 96, 32);
    s.join(clientKey, shardKey, entry);
    store.saveSecureRound(s);
  }

  /**
   * A message of phase 2 to 6 from {@code clientKey}, in its window: kept if it is the client's
   * first in the phase, from a client the phase is for, with shares addressed as the graph allows
   * and signatures that verify.
   *
   * @return true for a masked input the caller admits to the client's shard
   */
  boolean take(RoundStore store, SecureUpdate update, String clientKey, RoundDecisions out) {
    SecureRoundState s = store.secureRound();
    int index = s.indexOf(clientKey);
    String problem = null;
    if (index < 0) {
      problem = "client " + update.clientId + " is not on round " + s.round + "'s roster";
    } else if (update.phase == SecureUpdate.SHARE) {
      problem =
          s.shareMessages[index] != null
              ? "already sent its shares"
              : shareProblem(s, index, update);
      if (problem == null) {
        s.shareMessages[index] = update.message;
        s.recordPosition(
            index, SecureRoundState.SHARE_MESSAGE, update.sourcePartition, update.sourceOffset);
      }
    } else if (update.phase == SecureUpdate.CONFIRM) {
      int[] rejected = null;
      if (s.shareMessages[index] == null) {
        problem = "sent no shares in phase 2, so it was routed none to confirm";
      } else if (s.receipts[index] != null) {
        problem = "already sent its receipt";
      } else {
        rejected = receipt(update);
        problem = receiptProblem(s, index, rejected);
      }
      if (problem == null) {
        s.receipts[index] = rejected;
        s.recordPosition(
            index, SecureRoundState.RECEIPT_MESSAGE, update.sourcePartition, update.sourceOffset);
      }
    } else if (update.phase == SecureUpdate.MASKED_INPUT) {
      problem =
          !s.confirmed[index]
              ? "was not confirmed in phase 3 (no receipt, or removed), so no one masked with it"
              : s.maskedInput[index] ? "already sent its masked input" : null;
      if (problem == null) {
        s.maskedInput[index] = true;
      }
    } else if (update.phase == SecureUpdate.CONSISTENCY) {
      byte[] signature = null;
      if (!s.maskedInput[index]) {
        problem = "sent no masked input, so it is no survivor to sign the list";
      } else if (s.signatures[index] != null) {
        problem = "already signed the survivor list";
      } else {
        signature = signature(update);
        problem =
            SigningKeys.verify(signingKey(s, index), s.statement, signature)
                ? null
                : "its signature does not verify, under its advertised signing key, on the survivor"
                    + " statement of round "
                    + s.round
                    + " (sign the Survivors message as published)";
      }
      if (problem == null) {
        s.signatures[index] = signature;
      }
    } else {
      problem =
          !s.maskedInput[index]
              ? "sent no masked input, so it takes no part in unmasking"
              : s.signatureThreshold > 0 && s.signatures[index] == null
                  ? "did not sign the survivor list in phase 5, so it takes no part in unmasking"
                  : s.unmaskMessages[index] != null
                      ? "already sent its unmask shares"
                      : unmaskProblem(s, index, update);
      if (problem == null) {
        s.unmaskMessages[index] = update.message;
        s.recordPosition(
            index, SecureRoundState.UNMASK_MESSAGE, update.sourcePartition, update.sourceOffset);
      }
    }
    if (problem != null) {
      out.reject(update, RejectReason.SECURE_PROTOCOL, problem);
      return false;
    }
    store.saveSecureRound(s);
    return update.phase == SecureUpdate.MASKED_INPUT;
  }

  // The graph of the round whose permutation this is: building one checks and inverts the whole
  // permutation, which each message of phases 2 and 4 must not cost again.
  private int[] graphPermutation;
  private int graphDegree;
  private HararyGraph graph;

  private HararyGraph graphOf(SecureRoundState s) {
    if (graph == null || graphPermutation != s.permutation || graphDegree != s.degree) {
      graph = SecureUnmasking.graphOf(s);
      graphPermutation = s.permutation;
      graphDegree = s.degree;
    }
    return graph;
  }

  /**
   * Phase 2's shares must go to each of the sender's neighbours but itself, once each, with
   * commitments for the round's t. Whether the shares are on the committed polynomials only their
   * recipients can tell: they say so on their receipts.
   */
  private String shareProblem(SecureRoundState s, int sender, SecureUpdate update) {
    ShareKeys keys = (ShareKeys) decode(update).getBody();
    int[] neighbours = graphOf(s).neighbourhood(sender);
    BitSet expected = new BitSet();
    for (int v : neighbours) {
      if (v != sender) {
        expected.set(v);
      }
    }
    BitSet seen = new BitSet();
    for (EncryptedShare share : keys.getShares()) {
      int v = share.getIndex();
      if (!expected.get(v) || seen.get(v)) {
        return "shares must go once to each of the sender's "
            + expected.cardinality()
            + " neighbours, but index "
            + v
            + " is "
            + (seen.get(v) ? "repeated" : "not one of them");
      }
      seen.set(v);
    }
    if (!seen.equals(expected)) {
      return "shares go to " + seen.cardinality() + " of " + expected.cardinality() + " neighbours";
    }
    int commitmentBytes = ClientSession.commitmentBytes(s.threshold);
    if (keys.getCommitments().remaining() != commitmentBytes) {
      return "commitments must be "
          + commitmentBytes
          + " bytes (two polynomials of t = "
          + s.threshold
          + "), were "
          + keys.getCommitments().remaining()
          + (keys.getCommitments().remaining() == 0
              ? "; a client from before verifiable secret sharing (SecureMessage v3) cannot take"
                  + " part: upgrade it"
              : "");
    }
    // The job checks revealed shares against these as Java holders do; libsodium, with which
    // Python holders check theirs, adds non-canonical encodings as if canonical, so such a dealer
    // could have Python holders accept shares the job refuses, and get them named (review 4).
    int bad = FeldmanCommitments.firstNotOnCurve(Float32.bytes(keys.getCommitments()));
    return bad < 0
        ? null
        : "commitment " + bad + " is not the canonical encoding of a point of edwards25519";
  }

  private static byte[] signature(SecureUpdate update) {
    var body = (dev.privagg.avro.SurvivorSignature) decode(update).getBody();
    byte[] out = new byte[body.getSignature().remaining()];
    body.getSignature().duplicate().get(out);
    return out;
  }

  private static byte[] signingKey(SecureRoundState s, int index) {
    return Arrays.copyOfRange(s.advertised[index], 96, AdvertisedKeys.ENTRY_BYTES);
  }

  private static int[] receipt(SecureUpdate update) {
    var receipt = (dev.privagg.avro.ShareReceipt) decode(update).getBody();
    return receipt.getRejected().stream().mapToInt(Integer::intValue).toArray();
  }

  /** A receipt may reject only neighbours that shared (their shares were routed to it). */
  private String receiptProblem(SecureRoundState s, int index, int[] rejected) {
    HararyGraph g = graphOf(s);
    for (int v : rejected) {
      if (!(v >= 0 && v < s.size()) || v == index || !g.areNeighbours(index, v)) {
        return "a receipt rejecting index " + v + ", which is not a neighbour";
      }
      if (s.shareMessages[v] == null) {
        return "a receipt rejecting index " + v + ", whose shares were not routed to it";
      }
    }
    return null;
  }

  /**
   * Phase 6: self-mask shares only for neighbours in U3, mask-key shares only for neighbours in U2
   * but not U3, each neighbour at most once.
   */
  private String unmaskProblem(SecureRoundState s, int holder, SecureUpdate update) {
    UnmaskShares shares = (UnmaskShares) decode(update).getBody();
    BitSet neighbours = new BitSet();
    for (int v : graphOf(s).neighbourhood(holder)) {
      neighbours.set(v);
    }
    BitSet seen = new BitSet();
    for (RevealedShare r : shares.getSelfMaskShares()) {
      int w = r.getIndex();
      if (!neighbours.get(w) || seen.get(w) || !s.maskedInput[w]) {
        return "a self-mask share for index " + w + ", which is not a surviving neighbour";
      }
      seen.set(w);
    }
    for (RevealedShare r : shares.getMaskKeyShares()) {
      int w = r.getIndex();
      if (!neighbours.get(w) || seen.get(w) || s.maskedInput[w] || !s.confirmed[w]) {
        return "a mask-key share for index " + w + ", which is not a dropped neighbour";
      }
      seen.set(w);
    }
    return null;
  }

  /** Phase 1 ends: fix the roster, choose the graph, and publish both. */
  private void closeRoster(SecureRoundState s, RoundDecisions out) {
    s.fixRoster();
    int n = s.size();
    s.shareMessages = new byte[n][];
    s.receipts = new int[n][];
    s.confirmed = new boolean[n];
    s.maskedInput = new boolean[n];
    s.unmaskMessages = new byte[n][];
    s.signatures = new byte[n][];
    s.messagePartitions = new int[3 * n];
    s.messageOffsets = new long[3 * n];
    RoundGraph graph = SecureUnmasking.graph(spec, s);
    if (graph == null) {
      // Too few clients for any graph: degree 0 tells a lone client the round has no secure sum.
      s.degree = 0;
      if (n > 0) {
        out.secureRound(message(s, new Roster(rosterEntries(s), 0, 0, List.of())));
      }
      return;
    }
    s.degree = graph.graph().neighbourhoodSize();
    s.threshold = graph.threshold();
    s.rejectionLimit = graph.rejectionLimit();
    // A round restored from before the consistency round (no phase-5 window) runs without it.
    s.signatureThreshold =
        s.consistencyDeadlineMillis > s.maskedInputDeadlineMillis
            ? RoundThresholds.signatureThreshold(n, SecureUnmasking.threatModel(spec))
            : 0;
    s.permutation = graph.graph().permutation();
    List<RosterEntry> entries = rosterEntries(s);
    List<Integer> permutation = new ArrayList<>(n);
    for (int p : s.permutation) {
      permutation.add(p);
    }
    out.secureRound(message(s, new Roster(entries, s.degree, s.threshold, permutation)));
  }

  private static List<RosterEntry> rosterEntries(SecureRoundState s) {
    List<RosterEntry> entries = new ArrayList<>(s.size());
    for (byte[] e : s.advertised) {
      entries.add(
          new RosterEntry(
              ByteBuffer.wrap(e, 0, 32).slice(),
              ByteBuffer.wrap(e, 32, 32).slice(),
              ByteBuffer.wrap(e, 64, 32).slice(),
              ByteBuffer.wrap(e, 96, e.length - 96).slice()));
    }
    return entries;
  }

  /**
   * Phase 2 ends: each client who shared gets the shares addressed to it from the others who did,
   * after every dealer's commitments (one record each, not one copy per recipient: a Shares record
   * stays O(k), and what every client reads O(n t) rather than O(n k t)).
   */
  private void routeShares(SecureRoundState s, RoundDecisions out) {
    if (s.beforeVerifiableSecretSharing) {
      return; // its stored ShareKeys are of SecureMessage v3: no client of today could use them
    }
    int n = s.size();
    List<List<RoutedShare>> inbox = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      inbox.add(new ArrayList<>());
    }
    for (int u = 0; u < n; u++) {
      if (s.shareMessages[u] == null) {
        continue;
      }
      ShareKeys keys = (ShareKeys) AvroCodec.decodeSecureMessage(s.shareMessages[u]).getBody();
      // Once per dealer, before the Shares that hold its shares: every client reads every record.
      out.secureRound(message(s, new Commitments(u, keys.getCommitments())));
      for (EncryptedShare share : keys.getShares()) {
        if (s.shareMessages[share.getIndex()] != null) {
          inbox.get(share.getIndex()).add(new RoutedShare(u, share.getCiphertext()));
        }
      }
    }
    for (int v = 0; v < n; v++) {
      if (s.shareMessages[v] != null) {
        out.secureRound(message(s, new Shares(v, inbox.get(v))));
      }
    }
  }

  /**
   * Phase 3 ends: from the receipts, who takes part on and which pairs are cut ({@link
   * ShareConfirmation}); clients removed for rejected shares or for rejecting too many are named on
   * the rejects topic. A round restored from a version without receipts (no confirm window)
   * confirms every client that shared.
   */
  private void confirm(SecureRoundState s, RoundDecisions out) {
    int n = s.size();
    boolean receiptsExpected = s.confirmDeadlineMillis > s.shareDeadlineMillis;
    boolean[] shared = new boolean[n];
    int[][] receipts = new int[n][];
    for (int i = 0; i < n; i++) {
      shared[i] = s.shareMessages[i] != null;
      receipts[i] = receiptsExpected ? s.receipts[i] : shared[i] ? new int[0] : null;
    }
    // r as the roster's graph was chosen with, not the spec's now: a restore under other rates
    // must neither throw here nor judge this round by another graph's limit.
    HararyGraph g = graphOf(s);
    ShareConfirmation.Result result =
        ShareConfirmation.decide(
            n, g::neighbourhood, shared, receipts, s.threshold, s.rejectionLimit);
    int limit = ShareConfirmation.toleratedRejections(s.rejectionLimit);
    s.confirmed = new boolean[n];
    for (int u : result.confirmed()) {
      s.confirmed[u] = true;
    }
    s.cuts = result.cuts();
    result
        .removed()
        .forEach(
            (u, why) -> {
              switch (why) {
                case SHARES_REJECTED ->
                    misbehaved(
                        s,
                        u,
                        SecureRoundState.SHARE_MESSAGE,
                        "its shares were rejected by more than "
                            + limit
                            + " neighbours (r = "
                            + s.rejectionLimit
                            + " colluders, the most an honest client's neighbourhood holds but for"
                            + " 2^-41 / n, and one client more); removed from the round before"
                            + " masking",
                        out);
                case TOO_MANY_REJECTIONS ->
                    misbehaved(
                        s,
                        u,
                        SecureRoundState.RECEIPT_MESSAGE,
                        "its receipt rejected "
                            + s.receipts[u].length
                            + " neighbours' shares, more than the "
                            + limit
                            + " misbehaving neighbours an honest client can meet; removed, its"
                            + " rejections ignored",
                        out);
                case TOO_FEW_PARTNERS -> {}
              }
            });
    List<Integer> confirmed = new ArrayList<>();
    for (int u : result.confirmed()) {
      confirmed.add(u);
    }
    List<CutPair> cuts = new ArrayList<>();
    for (int[] c : s.cuts) {
      cuts.add(new CutPair(c[0], c[1]));
    }
    out.secureRound(message(s, new Confirmed(confirmed, cuts)));
  }

  /**
   * Names client {@code index} on the rejects topic with its message of {@code kind}: a client the
   * round has proof or near-proof (2^-41 / n) of misbehaving.
   */
  private void misbehaved(
      SecureRoundState s, int index, int kind, String detail, RoundDecisions out) {
    // Every client named here shared: its ShareKeys holds its id, whatever message shows it.
    byte[] shares = s.shareMessages[index];
    SecureUpdate named = new SecureUpdate();
    named.jobId = spec.jobId();
    named.round = s.round;
    named.clientKey = s.clientKeys[index];
    named.clientId =
        shares != null && !s.beforeVerifiableSecretSharing
            ? AvroCodec.decodeSecureMessage(shares).getClientId().toString()
            : "roster index " + index;
    named.sourceTopic = spec.topics().updates();
    named.sourcePartition = s.messagePartitions[3 * index + kind];
    named.sourceOffset = s.messageOffsets[3 * index + kind];
    out.misbehaved(named, detail);
  }

  /**
   * Phase 4 ends: who was confirmed (U2) and who sent a masked input (U3), and the statement the
   * survivors sign in phase 5 ({@link SurvivorStatement}).
   */
  private void announceSurvivors(SecureRoundState s, RoundDecisions out) {
    List<Integer> shared = new ArrayList<>();
    List<Integer> masked = new ArrayList<>();
    for (int i = 0; i < s.size(); i++) {
      if (s.confirmed[i]) {
        shared.add(i);
      }
      if (s.maskedInput[i]) {
        masked.add(i);
      }
    }
    if (s.signatureThreshold > 0) {
      s.statement =
          SurvivorStatement.digest(
              SecureUnmasking.context(spec, s),
              s.advertised,
              s.degree,
              s.threshold,
              s.permutation,
              s.confirmedIndices(),
              s.cuts,
              s.maskedInputIndices());
    }
    out.secureRound(message(s, new Survivors(shared, masked)));
  }

  /**
   * Phase 5 ends: the valid signatures of the survivor statement, for every client to count before
   * it reveals a share.
   */
  private void publishSignatures(SecureRoundState s, RoundDecisions out) {
    List<SignedSurvivors> signed = new ArrayList<>();
    for (int i = 0; i < s.size(); i++) {
      if (s.signatures[i] != null) {
        signed.add(new SignedSurvivors(i, ByteBuffer.wrap(s.signatures[i].clone())));
      }
    }
    out.secureRound(message(s, new Consistency(signed)));
  }

  /**
   * The round closes at its deadline: ends any phase still open, reconstructs the survivors' self-
   * mask seeds and the dropped clients' mask keys, and asks each unmask block for its coordinates'
   * correction; the combiner waits for the blocks besides the shards. A round that cannot be
   * unmasked carries no sum: its shards drop what they summed and it is released with noise alone,
   * charged as any round (whether a round is released must not depend on who sent what: design.md
   * invariant 10).
   */
  void unmask(
      RoundStore store, OpenRound round, long closedAt, ShardPlan shards, RoundDecisions out) {
    phasesDue(store, closedAt - 1, out);
    SecureRoundState s = store.secureRound();
    if (s == null || round.contributions == 0) {
      return; // no masked input: nothing to unmask, and the sum is zero
    }
    int signers = s.signedCount();
    SecureUnmasking.Outcome outcome =
        s.beforeVerifiableSecretSharing
            ? SecureUnmasking.Outcome.failed(
                "the round opened before this version's verifiable secret sharing (SecureMessage"
                    + " v4): its keys and shares are of the old protocol")
            : !s.masksLike(spec.maskedWordBits(), spec.maskedDimension(), planOf(spec))
                ? SecureUnmasking.Outcome.failed(
                    "the round opened with masked words of "
                        + s.maskedWordBits
                        + " bits and distributed noise '"
                        + s.distributedPlan
                        + "', this spec masks "
                        + spec.maskedWordBits()
                        + "-bit words with '"
                        + planOf(spec)
                        + "' (the mechanism, its noise or bitsPerCoordinate changed under an open"
                        + " round): its inputs are neither decoded nor released")
                : s.phase != SecureUpdate.UNMASK
                    ? SecureUnmasking.Outcome.failed("the roster admitted no neighbour graph")
                    : signers < s.signatureThreshold
                        ? SecureUnmasking.Outcome.failed(
                            "only "
                                + signers
                                + " survivors signed the survivor list, fewer than the "
                                + s.signatureThreshold
                                + " a client needs before it unmasks")
                        : SecureUnmasking.corrections(spec, s);
    for (int liar : outcome.provenLiars()) {
      misbehaved(
          s,
          liar,
          SecureRoundState.UNMASK_MESSAGE,
          "it revealed a share that is not on the polynomial its dealer's commitments state",
          out);
    }
    if (outcome.terms() == null) {
      withoutSum(s.round, round, outcome.problem(), out);
      return;
    }
    String[] blocks = shards.blockKeys(spec.jobId() + "#unmask");
    int dimension = spec.maskedDimension();
    for (int b = 0; b < blocks.length; b++) {
      int from = (int) ((long) b * dimension / blocks.length);
      int to = (int) ((long) (b + 1) * dimension / blocks.length);
      out.unmask(
          new UnmaskRequest(spec.jobId(), s.round, blocks[b], from, to - from, outcome.terms()));
    }
  }

  /**
   * A round whose masked inputs will not be unmasked: its shards drop their sums and it is released
   * with noise alone.
   */
  private static void withoutSum(
      long roundNumber, OpenRound round, String problem, RoundDecisions out) {
    out.unmaskFailed(roundNumber, round.contributions, problem);
    out.discard(roundNumber, round);
    round.shardKeys = new String[0];
    round.shardCounts = new long[0];
    round.contributions = 0;
  }

  /**
   * A job restored under a plaintext spec while a secure round was open: the shards hold masked
   * inputs that nothing will unmask, so the round is released with noise alone.
   */
  static void closeUnderPlaintext(RoundStore store, OpenRound round, RoundDecisions out) {
    SecureRoundState s = store.secureRound();
    if (s != null && round.contributions > 0) {
      withoutSum(
          s.round,
          round,
          "the job was restored with aggregation.mode plaintext while the round was open",
          out);
    }
  }

  private SecureRound message(SecureRoundState s, Object body) {
    return new SecureRound(spec.jobId(), s.round, ByteBuffer.wrap(s.session.clone()), body);
  }

  private static SecureMessage decode(SecureUpdate update) {
    return AvroCodec.decodeSecureMessage(update.message);
  }
}
