package dev.privagg.secagg;

import dev.privagg.secagg.UnmaskShares.RevealedShare;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One client's part in one protocol instance ({@link RoundContext}), as a state machine fed with
 * the job's messages: {@link #advertise()} (phase 1), {@link #onRoster} (phase 2), {@link
 * #onShares} and {@link #rejectedSenders} (phase 3, the receipt), {@link #onConfirmed} and {@link
 * #maskedInput} (phase 4), {@link #signSurvivors} (phase 5, the consistency round), {@link #unmask}
 * (phase 6). It holds the client's secrets, so it is never persisted or reused for another context.
 *
 * <p>Which pairwise masks: the client masks with exactly the neighbours the job confirmed ({@code
 * Confirmed}, from every client's receipt: {@link ShareConfirmation}) whose shares were routed to
 * it and whose pair with it is not cut. A neighbour whose share did not decrypt is on its receipt,
 * so the job either removes that neighbour or cuts the pair; the client refuses a {@code Confirmed}
 * that does neither.
 *
 * <p>Guards for phases 5 and 6 (Bonawitz et al., CCS 2017, Section 4; Bell et al., CCS 2020): the
 * client signs a survivor list only after sending its masked input, only if it is in U3, U3 is
 * within U2 (the confirmed clients), U2 is the {@code Confirmed} it masked by and at least t of its
 * neighbourhood are in U3; it signs one list only ({@link SurvivorStatement}), and reveals shares
 * only when at least {@link RoundThresholds#signatureThreshold} clients of U3 signed that same
 * statement. Each honest client signs once, so no two statements reach that count: every client
 * that reveals saw the same roster, cuts and survivors, and none reveals both the self-mask seed
 * and the mask key of one client, whatever lists a lying server shows whom.
 */
public final class ClientSession {
  /** An encrypted pair of shares for the neighbour {@code recipient} (phase 2). */
  public record EncryptedShare(int recipient, byte[] ciphertext) {
    public EncryptedShare {
      ciphertext = ciphertext.clone();
    }

    @Override
    public byte[] ciphertext() {
      return ciphertext.clone();
    }
  }

  /**
   * An encrypted pair of shares from the neighbour {@code sender}, as the job routes it (a Shares
   * entry), with the sender's commitments to its two sharing polynomials (its Commitments record,
   * {@link #commitments()}).
   */
  public record RoutedShare(int sender, byte[] ciphertext, byte[] commitments) {
    public RoutedShare {
      ciphertext = ciphertext.clone();
      commitments = commitments.clone();
    }

    @Override
    public byte[] ciphertext() {
      return ciphertext.clone();
    }

    @Override
    public byte[] commitments() {
      return commitments.clone();
    }
  }

  /** A routed share the client could not use, and why. */
  public record FailedShare(int sender, String reason) {}

  private enum Phase {
    ADVERTISE,
    SHARE,
    CONFIRM,
    MASK,
    MASKED,
    SIGNED
  }

  private final RoundContext ctx;
  private final String clientId;

  /** The job's rates: the graph a Roster may state is the one they give its size; null in tests. */
  private final ThreatModel threat;

  private final SecureRandom random;
  private final X25519Keys encryptionKeys;
  private final MaskKeys maskKeys;
  private final byte[] selfMaskSeed;
  private final SigningKeys signingKeys;
  private final AdvertisedKeys advertised;

  private Phase phase = Phase.ADVERTISE;
  private int index;
  private int n;
  private int threshold;
  private int rejectionLimit;
  private int signatureThreshold;
  private int[] neighbourhood;
  private List<AdvertisedKeys> roster;
  private int[] permutation;
  private byte[] rosterDigest;
  private byte[] commitments;

  /** Per neighbour: its mask public key and self-mask commitment, decoded (C_0 of its sharings). */
  private final Map<Integer, Edwards25519.Point[]> constantCommitments = new TreeMap<>();

  private final Map<Integer, byte[]> shareEncryptionKeys = new TreeMap<>();
  private final Map<Integer, byte[]> pairwiseMaskKeys = new TreeMap<>();
  private final Map<Integer, byte[]> heldMaskKeyShares = new TreeMap<>();
  private final Map<Integer, byte[]> heldSelfMaskShares = new TreeMap<>();
  private int[] routedSenders;
  private int[] rejected;
  private boolean[] confirmedView;
  private int[] confirmedList;
  private int[][] confirmedCuts;
  private int[] maskedWith;
  private byte[] maskedUnitsDigest;
  private boolean[] signedMaskedInput;
  private int[] signedSurvivors;
  private byte[] statement;
  private byte[] signature;
  private UnmaskShares unmaskShares;

  ClientSession(
      RoundContext ctx,
      String clientId,
      ThreatModel threat,
      SecureRandom random,
      X25519Keys encryptionKeys,
      MaskKeys maskKeys,
      byte[] selfMaskSeed,
      SigningKeys signingKeys) {
    if (ctx == null || clientId == null || random == null) {
      throw new IllegalArgumentException("ctx, clientId and random must not be null");
    }
    this.ctx = ctx;
    this.clientId = clientId;
    this.threat = threat;
    this.random = random;
    this.encryptionKeys = encryptionKeys;
    this.maskKeys = maskKeys;
    this.selfMaskSeed = Edwards25519.scalarBytes(Edwards25519.scalar("selfMaskSeed", selfMaskSeed));
    this.signingKeys = signingKeys;
    this.advertised =
        new AdvertisedKeys(
            encryptionKeys.publicKey(),
            maskKeys.publicKey(),
            DerivedKeys.selfMaskCommitment(selfMaskSeed),
            signingKeys.publicKey());
  }

  /**
   * Starts a session: draws the encryption and mask key pairs and the self-mask seed b.
   *
   * @param clientId the client's id, for messages
   * @param threat the job's rates and adversary, from its spec: a Roster must state the graph they
   *     give its size ({@link RoundThresholds#choose}), never one the server picked
   */
  public static ClientSession start(
      RoundContext ctx, String clientId, ThreatModel threat, SecureRandom random) {
    if (threat == null) {
      throw new IllegalArgumentException("threat must not be null: it is what a Roster is held to");
    }
    return startChecking(ctx, clientId, threat, random);
  }

  /** A session that takes whatever graph a Roster states: for tests of arbitrary graphs only. */
  static ClientSession startUnchecked(RoundContext ctx, String clientId, SecureRandom random) {
    return startChecking(ctx, clientId, null, random);
  }

  private static ClientSession startChecking(
      RoundContext ctx, String clientId, ThreatModel threat, SecureRandom random) {
    X25519Keys encryptionKeys = X25519Keys.generate(random);
    MaskKeys maskKeys = MaskKeys.generate(random);
    byte[] seed = Edwards25519.scalarBytes(Edwards25519.randomScalar(random));
    SigningKeys signingKeys = SigningKeys.generate(random);
    return new ClientSession(
        ctx, clientId, threat, random, encryptionKeys, maskKeys, seed, signingKeys);
  }

  /** Phase 1: the public keys and commitment to send. */
  public AdvertisedKeys advertise() {
    return advertised;
  }

  /**
   * Phase 2: finds this client in the roster by its encryption key, and shares its mask private key
   * and self-mask seed among its neighbourhood (share for neighbour v at {@code x = v + 1}), with
   * Feldman commitments to both polynomials ({@link #commitments}), which the job publishes once
   * for all the holders.
   *
   * @param roster every admitted client's keys, in index order
   * @param degree k, the neighbourhood's size with the client itself (odd)
   * @param threshold t, in [1, k]
   * @param permutation the Harary graph's node permutation, of 0..n-1
   * @return the encrypted shares for the client's k - 1 other neighbours, by recipient
   * @throws IllegalArgumentException if the roster or graph is malformed, lists this client's
   *     encryption key other than exactly once or with other keys, or gives a neighbour a mask key
   *     or self-mask commitment that is no point of edwards25519's prime-order subgroup
   */
  public List<EncryptedShare> onRoster(
      List<AdvertisedKeys> roster, int degree, int threshold, int[] permutation) {
    requirePhase(Phase.ADVERTISE, "onRoster");
    int size = roster.size();
    if (permutation.length != size) {
      throw new IllegalArgumentException(
          "permutation must have one entry per roster entry ("
              + size
              + "), had "
              + permutation.length);
    }
    HararyGraph graph = HararyGraph.ofNeighbourhoodSize(degree, permutation);
    if (!(threshold >= 1 && threshold <= degree)) {
      throw new IllegalArgumentException(
          "threshold must be in [1, " + degree + "] (the degree), was " + threshold);
    }
    int self = ownIndex(roster);
    rejectionLimit = checkGraphParameters(size, degree, threshold);
    signatureThreshold =
        threat == null ? size / 2 + 1 : RoundThresholds.signatureThreshold(size, threat);
    // The complete graph is the same whatever the permutation says; a ring must be the roster's.
    if (degree != size && !Arrays.equals(permutation, RosterPermutation.of(ctx, roster))) {
      throw new IllegalArgumentException(
          clientId
              + ": the roster's permutation is not the one its keys derive (RosterPermutation);"
              + " a server that picks the graph could surround this client with colluders");
    }
    int[] neighbours = graph.neighbourhood(self);
    for (int v : neighbours) {
      // Keys the shares are checked against and masks derive from: the job refuses others.
      constantCommitments.put(
          v,
          new Edwards25519.Point[] {
            Edwards25519.decode(
                "roster entry " + v + "'s maskPublicKey", roster.get(v).maskPublicKey()),
            Edwards25519.decode(
                "roster entry " + v + "'s selfMaskCommitment", roster.get(v).selfMaskCommitment())
          });
    }
    byte[] digest = RosterDigest.of(ctx, roster, degree, threshold, permutation);
    int[] xs = new int[degree];
    for (int i = 0; i < degree; i++) {
      xs[i] = neighbours[i] + 1;
    }
    Shamir.Polynomial maskKeyPolynomial =
        Shamir.Polynomial.random(maskKeys.privateKey(), threshold, random);
    Shamir.Polynomial selfMaskPolynomial =
        Shamir.Polynomial.random(selfMaskSeed, threshold, random);
    byte[][] maskKeyShares = maskKeyPolynomial.sharesAt(xs);
    byte[][] selfMaskShares = selfMaskPolynomial.sharesAt(xs);
    List<EncryptedShare> out = new ArrayList<>(degree - 1);
    for (int i = 0; i < degree; i++) {
      int v = neighbours[i];
      if (v == self) {
        heldMaskKeyShares.put(self, maskKeyShares[i]);
        heldSelfMaskShares.put(self, selfMaskShares[i]);
        continue;
      }
      AdvertisedKeys peer = roster.get(v);
      byte[] encryptionKey =
          DerivedKeys.shareEncryptionKey(
              ctx, encryptionKeys.privateKey(), self, peer.encryptionPublicKey(), v);
      shareEncryptionKeys.put(v, encryptionKey);
      pairwiseMaskKeys.put(
          v,
          DerivedKeys.pairwiseMaskKey(
              ctx, maskKeys.privateKey(), self, constantCommitments.get(v)[0], v));
      byte[] plaintext = Bytes.concat(maskKeyShares[i], selfMaskShares[i]);
      out.add(
          new EncryptedShare(
              v, ShareCipher.encrypt(encryptionKey, ctx, self, v, digest, plaintext, random)));
    }
    this.index = self;
    this.n = size;
    this.threshold = threshold;
    this.neighbourhood = neighbours;
    this.roster = List.copyOf(roster);
    this.permutation = permutation.clone();
    this.rosterDigest = digest;
    this.commitments =
        Bytes.concat(maskKeyPolynomial.commitments(), selfMaskPolynomial.commitments());
    phase = Phase.SHARE;
    return out;
  }

  /**
   * Phase 2's public part: the Feldman commitments to the coefficients 1 .. t-1 of the mask key's
   * sharing polynomial, then of the self-mask seed's ({@link #commitmentBytes}(t) bytes); the
   * constant terms' are the advertised {@code s_pk} and self-mask commitment.
   */
  public byte[] commitments() {
    if (commitments == null) {
      throw new IllegalStateException(clientId + ": no roster yet, so no shares to commit to");
    }
    return commitments.clone();
  }

  /** Bytes of a client's {@link #commitments} at threshold t. */
  public static int commitmentBytes(int threshold) {
    return 2 * FeldmanCommitments.bytes(threshold);
  }

  /** This client's roster index (after {@link #onRoster}). */
  public int index() {
    if (phase == Phase.ADVERTISE) {
      throw new IllegalStateException(clientId + ": no roster yet, so no index");
    }
    return index;
  }

  /** Whether roster index {@code v} is one of this client's other neighbours (after onRoster). */
  public boolean isNeighbour(int v) {
    return v != index() && Arrays.binarySearch(neighbourhood, v) >= 0;
  }

  /**
   * Phase 3 starts: takes the shares the job routed to this client. Shares that are not from a
   * neighbour, repeat a sender, do not decrypt or are not on the polynomials the sender's
   * commitments state are left out and reported, never thrown; the neighbours among them whose
   * share does not decrypt or fails its commitments are this client's receipt ({@link
   * #rejectedSenders}).
   *
   * @return the shares left out, with the reason for each
   */
  public List<FailedShare> onShares(List<RoutedShare> routed) {
    requirePhase(Phase.SHARE, "onShares");
    List<FailedShare> failed = new ArrayList<>();
    boolean[] seen = new boolean[n];
    List<Integer> senders = new ArrayList<>();
    List<Integer> undecryptable = new ArrayList<>();
    for (RoutedShare share : routed) {
      int v = share.sender();
      if (!(v >= 0 && v < n)) {
        failed.add(new FailedShare(v, "sender " + v + " is not in the roster of " + n));
      } else if (v == index || Arrays.binarySearch(neighbourhood, v) < 0) {
        failed.add(new FailedShare(v, "sender " + v + " is not a neighbour of " + index));
      } else if (seen[v]) {
        failed.add(new FailedShare(v, "sender " + v + " appears more than once"));
      } else {
        seen[v] = true;
        senders.add(v);
        try {
          byte[] plaintext =
              ShareCipher.decrypt(
                  shareEncryptionKeys.get(v), ctx, v, index, rosterDigest, share.ciphertext());
          byte[] maskKeyShare = Arrays.copyOfRange(plaintext, 0, Shamir.SHARE_BYTES);
          byte[] selfMaskShare =
              Arrays.copyOfRange(plaintext, Shamir.SHARE_BYTES, ShareCipher.PLAINTEXT_BYTES);
          String problem = commitmentProblem(v, share.commitments(), maskKeyShare, selfMaskShare);
          if (problem != null) {
            // Decrypts, but is no share of what the sender advertised: as junk as a ciphertext
            // that does not decrypt, and the receipt says so before anyone masks with it.
            failed.add(new FailedShare(v, problem));
            undecryptable.add(v);
          } else {
            heldMaskKeyShares.put(v, maskKeyShare);
            heldSelfMaskShares.put(v, selfMaskShare);
          }
        } catch (ForgedShareException e) {
          failed.add(new FailedShare(v, e.getMessage()));
          undecryptable.add(v);
        }
      }
    }
    routedSenders = senders.stream().mapToInt(Integer::intValue).sorted().toArray();
    rejected = undecryptable.stream().mapToInt(Integer::intValue).sorted().toArray();
    phase = Phase.CONFIRM;
    return failed;
  }

  private String commitmentProblem(
      int v, byte[] senderCommitments, byte[] maskKeyShare, byte[] selfMaskShare) {
    int half = FeldmanCommitments.bytes(threshold);
    if (senderCommitments.length != 2 * half) {
      return "sender "
          + v
          + "'s commitments are "
          + senderCommitments.length
          + " bytes, not the "
          + 2 * half
          + " of t = "
          + threshold;
    }
    Edwards25519.Point[] constants = constantCommitments.get(v);
    boolean maskKeyOk =
        FeldmanCommitments.verifies(
            constants[0],
            Arrays.copyOfRange(senderCommitments, 0, half),
            threshold,
            index + 1,
            maskKeyShare);
    boolean selfMaskOk =
        FeldmanCommitments.verifies(
            constants[1],
            Arrays.copyOfRange(senderCommitments, half, 2 * half),
            threshold,
            index + 1,
            selfMaskShare);
    return maskKeyOk && selfMaskOk
        ? null
        : "sender "
            + v
            + "'s share of its "
            + (maskKeyOk ? "self-mask seed" : "mask key")
            + " is not on the polynomial its commitments state";
  }

  /**
   * Phase 3: the receipt, the neighbours whose routed share did not decrypt (sorted); the job
   * removes them or cuts their pair with this client, so no mask depends on a share it lacks.
   */
  public int[] rejectedSenders() {
    if (rejected == null) {
      throw new IllegalStateException(clientId + ": no shares taken yet, so no receipt");
    }
    return rejected.clone();
  }

  /**
   * Phase 4 starts: who the job confirmed from every client's receipt, and the pairs it cut ({@link
   * ShareConfirmation}); fixes the partners this client masks with.
   *
   * @param confirmed the confirmed roster indices (U2 from now on)
   * @param cuts pairs {@code {lo, hi}} that do not mask with each other
   * @throws IllegalArgumentException if an index is outside the roster or repeats
   * @throws IllegalStateException if this client was not confirmed (it sends no masked input), or
   *     the job confirms a neighbour whose shares were not routed here, or one this client rejected
   *     without cutting their pair, or cuts more of its pairs than r colluders could account for (a
   *     lying server that cuts a client down to few partners would leave its input under few masks)
   */
  public void onConfirmed(int[] confirmed, int[][] cuts) {
    requirePhase(Phase.CONFIRM, "onConfirmed");
    boolean[] in = Unmasking.members("confirmed", confirmed, n);
    int[][] sortedCuts = Unmasking.pairs("cuts", cuts, n);
    if (!in[index]) {
      throw new IllegalStateException(
          clientId
              + ": not confirmed for round "
              + ctx.round()
              + " (too few partners, or its shares or receipt were refused); no masked input is"
              + " sent");
    }
    List<Integer> partners = new ArrayList<>();
    int cutPairs = 0;
    for (int w : neighbourhood) {
      if (w == index || !in[w]) {
        continue;
      }
      if (Arrays.binarySearch(routedSenders, w) < 0) {
        throw new IllegalStateException(
            clientId + ": the job confirms neighbour " + w + ", whose shares were not routed here");
      }
      boolean cut = ShareConfirmation.isCut(sortedCuts, index, w);
      if (Arrays.binarySearch(rejected, w) >= 0 && !cut) {
        throw new IllegalStateException(
            clientId
                + ": the job confirms neighbour "
                + w
                + ", whose share did not decrypt here, without cutting the pair");
      }
      if (!cut) {
        partners.add(w);
      } else {
        cutPairs++;
      }
    }
    // Every cut pair of an honest client holds a misbehaving client (junk it sent, or a false
    // complaint): a colluder, r at most, or the one client neighbouring worlds differ by. Its own
    // rejections count too, since the server routes the shares and can turn an honest
    // neighbour's into junk.
    int tolerated = ShareConfirmation.toleratedRejections(rejectionLimit);
    if (cutPairs > tolerated) {
      throw new IllegalStateException(
          clientId
              + ": the job cuts "
              + cutPairs
              + " of its pairs, more than the "
              + tolerated
              + " misbehaving clients its neighbourhood may hold (r = "
              + rejectionLimit
              + " colluders and one client more); no masked input is sent");
    }
    confirmedView = in;
    confirmedList = confirmed.clone();
    confirmedCuts = sortedCuts;
    maskedWith = partners.stream().mapToInt(Integer::intValue).toArray();
    phase = Phase.MASK;
  }

  /**
   * Phase 4: {@code y = x + mask(self-mask key) + sum of sign(u, v) mask(pairwise key of u, v)}
   * over the partners {@link #onConfirmed} fixed, modulo 2^64, as 8d bytes little-endian. One
   * update per session: the same units again give the same bytes (computed again: the session keeps
   * only their digest, not O(d) bytes), other units are refused (two masked inputs under one
   * self-mask would reveal their difference).
   */
  public byte[] maskedInput(long[] units) {
    if (maskedUnitsDigest != null) {
      if (!Arrays.equals(digestOf(units), maskedUnitsDigest)) {
        throw new IllegalStateException(
            clientId + ": a masked input of other units was already computed in this session");
      }
      return mask(units);
    }
    requirePhase(Phase.MASK, "maskedInput");
    if (maskedWith.length + 1 < threshold) {
      // Bonawitz et al.'s |U2| >= t: masked with fewer partners, the self-mask would be nearly all
      // that hides the input, and the server could hold back the other shares on purpose.
      throw new IllegalStateException(
          clientId
              + ": only "
              + maskedWith.length
              + " confirmed partners, fewer than the threshold "
              + threshold
              + " - 1; no masked input is sent");
    }
    byte[] y = mask(units);
    maskedUnitsDigest = digestOf(units);
    phase = Phase.MASKED;
    return y;
  }

  /**
   * As {@link #maskedInput(long[])}, sent as {@code bits}-bit words ({@link WordPacking}): the job
   * sums them modulo 2^64 and reads the low bits, where the masks cancel as they do on 64 bits.
   */
  public byte[] maskedInput(long[] units, int bits) {
    byte[] words = maskedInput(units);
    if (bits == 64) {
      return words;
    }
    long[] y = new long[units.length];
    java.nio.ByteBuffer.wrap(words).order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(y);
    return WordPacking.pack(y, bits);
  }

  private byte[] mask(long[] units) {
    int d = units.length;
    long[] y = units.clone();
    new MaskStream(DerivedKeys.selfMaskKey(ctx, selfMaskSeed, index)).addTo(y, 0, d, 1);
    for (int v : maskedWith) {
      new MaskStream(pairwiseMaskKeys.get(v)).addTo(y, 0, d, index < v ? 1 : -1);
    }
    return littleEndian(y);
  }

  private static byte[] digestOf(long[] units) {
    return Bytes.sha256().digest(littleEndian(units));
  }

  /**
   * Phase 5, the consistency round: checks the survivor list the job announced and signs it ({@link
   * SurvivorStatement}), once per session: the same lists again give the same signature, others are
   * refused.
   *
   * @param shared who was confirmed (U2): must be the {@code Confirmed} this client masked by
   * @param maskedInput who sent a masked input (U3)
   * @return the 64-byte Ed25519 signature of the statement
   * @throws IllegalArgumentException if an index is outside the roster or repeats
   * @throws IllegalStateException if a guard of the protocol refuses (see the class comment)
   */
  public byte[] signSurvivors(int[] shared, int[] maskedInput) {
    boolean[] inShared = members("shared", shared);
    boolean[] inMaskedInput = members("maskedInput", maskedInput);
    if (phase != Phase.MASKED && phase != Phase.SIGNED) {
      throw new IllegalStateException(clientId + ": survivors before sending a masked input");
    }
    if (!Arrays.equals(inShared, confirmedView)) {
      throw new IllegalStateException(
          clientId + ": shared (U2) is not the round's Confirmed, which this client masked by");
    }
    if (!inMaskedInput[index]) {
      throw new IllegalStateException(
          clientId + ": not in maskedInput (U3), though it sent its masked input");
    }
    for (int w : maskedInput) {
      if (!inShared[w]) {
        throw new IllegalStateException(
            clientId + ": maskedInput (U3) must be within shared (U2), but " + w + " is not");
      }
    }
    int survivors = 0;
    for (int w : neighbourhood) {
      if (inMaskedInput[w]) {
        survivors++;
      }
    }
    if (survivors < threshold) {
      throw new IllegalStateException(
          clientId
              + ": only "
              + survivors
              + " of its neighbourhood are in maskedInput (U3), fewer than the threshold "
              + threshold);
    }
    // Only partners' masks hide its input: a neighbour cut from it counts for nothing here, or
    // one Confirmed and one survivor list could strip its masks (k + a + 1 >= 2t, review3).
    int maskedSurvivors = 1; // itself
    for (int w : maskedWith) {
      if (inMaskedInput[w]) {
        maskedSurvivors++;
      }
    }
    if (maskedSurvivors < threshold) {
      throw new IllegalStateException(
          clientId
              + ": only "
              + maskedSurvivors
              + " of its partners (itself included) are in maskedInput (U3), fewer than the"
              + " threshold "
              + threshold);
    }
    int[] u3 = Unmasking.sorted(maskedInput);
    if (phase == Phase.SIGNED) {
      if (!Arrays.equals(u3, signedSurvivors)) {
        throw new IllegalStateException(
            clientId
                + ": already signed the survivor list "
                + Arrays.toString(signedSurvivors)
                + "; it signs one list per session");
      }
      return signature.clone();
    }
    statement =
        SurvivorStatement.digest(
            ctx,
            roster,
            neighbourhood.length,
            threshold,
            permutation,
            confirmedList,
            confirmedCuts,
            u3);
    signature = signingKeys.sign(statement);
    signedSurvivors = u3;
    signedMaskedInput = inMaskedInput;
    phase = Phase.SIGNED;
    return signature.clone();
  }

  /**
   * Phase 6: the shares this client reveals, once at least {@link
   * RoundThresholds#signatureThreshold} clients of the U3 it signed have signed the same statement:
   * of the self-mask seed of each neighbour in U3 (itself included), of the mask key of each
   * neighbour in U2 \ U3, for those whose shares it holds.
   *
   * @param signatures the job's {@code Consistency} message: each signer's roster index and
   *     signature; entries that are not a valid signature of a U3 member on this client's statement
   *     are ignored
   * @throws IllegalStateException if the session has signed no list, or too few signed its
   */
  public UnmaskShares unmask(Map<Integer, byte[]> signatures) {
    if (phase != Phase.SIGNED) {
      throw new IllegalStateException(clientId + ": unmask before signing a survivor list");
    }
    int valid = 0;
    for (Map.Entry<Integer, byte[]> e : signatures.entrySet()) {
      Integer signer = e.getKey();
      if (signer != null
          && signer >= 0
          && signer < n
          && signedMaskedInput[signer]
          && SigningKeys.verify(roster.get(signer).signingPublicKey(), statement, e.getValue())) {
        valid++;
      }
    }
    if (valid < signatureThreshold) {
      throw new IllegalStateException(
          clientId
              + ": only "
              + valid
              + " survivors signed the survivor list it signed, fewer than "
              + signatureThreshold
              + " ((n + A) / 2 + 1): another list may have been shown to others, so it reveals"
              + " nothing");
    }
    if (unmaskShares != null) {
      return unmaskShares;
    }
    List<RevealedShare> selfMaskShares = new ArrayList<>();
    List<RevealedShare> maskKeyShares = new ArrayList<>();
    for (int w : neighbourhood) {
      if (signedMaskedInput[w] && heldSelfMaskShares.containsKey(w)) {
        selfMaskShares.add(new RevealedShare(w, heldSelfMaskShares.get(w)));
      } else if (confirmedView[w] && !signedMaskedInput[w] && heldMaskKeyShares.containsKey(w)) {
        maskKeyShares.add(new RevealedShare(w, heldMaskKeyShares.get(w)));
      }
    }
    unmaskShares = new UnmaskShares(selfMaskShares, maskKeyShares);
    return unmaskShares;
  }

  /**
   * The signature a colluder's key gives any statement: what a client colluding with the server
   * signs, whatever it was shown. Only tests that play colluders call it.
   */
  byte[] signAsColluder(byte[] anyStatement) {
    return signingKeys.sign(anyStatement);
  }

  /**
   * The decrypted shares this client holds of {@code w}'s mask key and self-mask seed, or null:
   * what a client colluding with the server hands it, whatever the survivor lists say. Only tests
   * that play colluders call it.
   */
  byte[][] heldSharesOf(int w) {
    return heldMaskKeyShares.containsKey(w)
        ? new byte[][] {heldMaskKeyShares.get(w).clone(), heldSelfMaskShares.get(w).clone()}
        : null;
  }

  /**
   * k and t are the job's rates' for a roster of this size, not the server's choice: with t = 1,
   * say, every honest answer would hand over a self-mask seed.
   *
   * @return r, the cuts of its pairs this client accepts without rejecting them (the degree when
   *     there is no threat model to hold the roster to: tests of arbitrary graphs)
   */
  private int checkGraphParameters(int size, int degree, int threshold) {
    if (threat == null) {
      return degree;
    }
    var expected = RoundThresholds.choose(size, threat);
    if (expected.isEmpty()
        || expected.get().neighbourhoodSize() != degree
        || expected.get().threshold() != threshold) {
      throw new IllegalArgumentException(
          clientId
              + ": the roster states k = "
              + degree
              + ", t = "
              + threshold
              + " for "
              + size
              + " clients, but "
              + threat
              + " gives "
              + expected
                  .map(c -> "k = " + c.neighbourhoodSize() + ", t = " + c.threshold())
                  .orElse("no graph")
              + "; a server that picks them could weaken the thresholds");
    }
    return expected.get().rejectionLimit();
  }

  private int ownIndex(List<AdvertisedKeys> roster) {
    int found = -1;
    for (int i = 0; i < roster.size(); i++) {
      if (Arrays.equals(roster.get(i).encryptionPublicKey(), advertised.encryptionPublicKey())) {
        if (found >= 0) {
          throw new IllegalArgumentException(
              clientId
                  + ": its encryption key appears twice in the roster, at "
                  + found
                  + " and "
                  + i);
        }
        found = i;
      }
    }
    if (found < 0) {
      throw new IllegalArgumentException(clientId + ": its encryption key is not in the roster");
    }
    AdvertisedKeys entry = roster.get(found);
    if (!Arrays.equals(entry.maskPublicKey(), advertised.maskPublicKey())
        || !Arrays.equals(entry.selfMaskCommitment(), advertised.selfMaskCommitment())
        || !Arrays.equals(entry.signingPublicKey(), advertised.signingPublicKey())) {
      throw new IllegalArgumentException(
          clientId + ": roster entry " + found + " has its encryption key but other keys");
    }
    return found;
  }

  private boolean[] members(String name, int[] indices) {
    if (phase == Phase.ADVERTISE) {
      throw new IllegalStateException(clientId + ": unmask before the roster");
    }
    return Unmasking.members(name, indices, n);
  }

  private void requirePhase(Phase expected, String call) {
    if (phase != expected) {
      throw new IllegalStateException(
          clientId
              + ": "
              + call
              + " is for phase "
              + expected
              + ", but the session is at "
              + phase);
    }
  }

  private static byte[] littleEndian(long[] words) {
    ByteBuffer out = ByteBuffer.allocate(8 * words.length).order(ByteOrder.LITTLE_ENDIAN);
    out.asLongBuffer().put(words);
    return out.array();
  }
}
