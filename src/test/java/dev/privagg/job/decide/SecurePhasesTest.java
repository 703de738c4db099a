package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.AdvertiseKeys;
import dev.privagg.avro.Commitments;
import dev.privagg.avro.Confirmed;
import dev.privagg.avro.Consistency;
import dev.privagg.avro.EncryptedShare;
import dev.privagg.avro.MaskedInput;
import dev.privagg.avro.Opened;
import dev.privagg.avro.RevealedShare;
import dev.privagg.avro.Roster;
import dev.privagg.avro.RosterEntry;
import dev.privagg.avro.RoutedShare;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.SecureRound;
import dev.privagg.avro.ShareKeys;
import dev.privagg.avro.ShareReceipt;
import dev.privagg.avro.Shares;
import dev.privagg.avro.SignedSurvivors;
import dev.privagg.avro.SurvivorSignature;
import dev.privagg.avro.Survivors;
import dev.privagg.avro.UnmaskShares;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.ClosedRound;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.RawUpdate;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.SecureUpdate;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.combine.UnmaskBlockFunction;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.secagg.AdvertisedKeys;
import dev.privagg.secagg.ClientSession;
import dev.privagg.secagg.MaskCorrection;
import dev.privagg.secagg.Quantizer;
import dev.privagg.secagg.RosterPermutation;
import dev.privagg.secagg.RoundContext;
import dev.privagg.secagg.RoundThresholds;
import dev.privagg.secagg.ShareCipher;
import dev.privagg.secagg.ThreatModel;
import dev.privagg.spec.JobSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The six phases of a secure round at the decider ({@link SecurePhases} inside {@link
 * RoundLifecycle}), driven by genuine clients ({@link ClientSession}) through broker timestamps and
 * event time as the Flink operator drives it: what the job publishes at each phase deadline, which
 * messages it takes, what it rejects and why, and what it asks the unmask blocks for at the round's
 * deadline (docs/secure-aggregation.md).
 */
class SecurePhasesTest {
  private static final String JOB = JobFixtures.JOB;
  private static final String EXACT = "noiseMultiplier: 0\nbudgetEpsilon: .inf";
  private static final String SECURE =
      "aggregation: {mode: secure, maxDropoutRate: 0.3, adversarialClientRate: 0.1,"
          + " adversary: curious-server, phases: {advertise: 250ms, share: 250ms, confirm: 100ms,"
          + " maskedInput: 150ms, consistency: 100ms}}";

  /** The noisy count a round is unmasked behind: 5 masked inputs pass it but for 1e-37. */
  private static final String GATE = "minimumCohort: {count: 4.36, noiseStd: 0.05}";

  private static final ThreatModel THREAT =
      new ThreatModel(0.1, 0.3, ThreatModel.AdversaryClass.CURIOUS_SERVER);
  // rounds.timeout is 1000 ms: the phases as SECURE declares them, unmasking the rest.
  private static final long ADVERTISE_DEADLINE = 250;
  private static final long SHARE_DEADLINE = 500;
  private static final long CONFIRM_DEADLINE = 600;
  private static final long MASKED_INPUT_DEADLINE = 750;
  private static final long CONSISTENCY_DEADLINE = 850;
  private static final long DEADLINE = 1000;
  private static final int D = 3;

  private final JobSpec spec = JobFixtures.spec(EXACT, GATE, SECURE);
  private final LifecycleDriver driver = LifecycleDriver.releasing();
  private final LifecycleFakes.Store store = driver.store;
  private LifecycleFakes.Recorder decided;
  private final SecureRandom random = seeded(5);
  private long offset;

  private static SecureRandom seeded(long seed) {
    try {
      SecureRandom random = SecureRandom.getInstance("SHA1PRNG");
      random.setSeed(seed);
      return random;
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private void start() {
    start(new ShardPlan(1));
  }

  private void start(ShardPlan shards) {
    driver.start(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE, 0, shards);
    decided = driver.decided;
  }

  // What the job published.

  private <T> List<T> published(long round, Class<T> type) {
    return decided.secureMessages.stream()
        .filter(m -> m.getRound() == round)
        .map(SecureRound::getBody)
        .filter(type::isInstance)
        .map(type::cast)
        .toList();
  }

  /**
   * A round restored from a version before verifiable secret sharing holds its clients' ShareKeys
   * as SecureMessage v3 wrote them (another schema fingerprint) and X25519 keys: the decider routes
   * nothing, decodes none of it, and finishes the round without a sum, instead of failing at the
   * share deadline on every restart (the adversarial review's finding).
   */
  @Test
  void aRoundFromBeforeVerifiableSecretSharing_routesNothing_andEndsWithoutASum() throws Exception {
    start();
    List<Client> clients = clients(6);
    advertise(clients, 10);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    share(clients, 300);
    driver.advanceTo(400);
    // What a savepoint of a v3 job holds, as SecureRoundLayout v3 reads it.
    store.secure.beforeVerifiableSecretSharing = true;
    for (int i = 0; i < store.secure.shareMessages.length; i++) {
      if (store.secure.shareMessages[i] != null) {
        store.secure.shareMessages[i] = asVersion3(store.secure.shareMessages[i]);
      }
    }

    driver.advanceTo(DEADLINE + 1);

    assertThat(published(1, Commitments.class)).isEmpty();
    assertThat(published(1, Shares.class)).isEmpty();
    assertThat(decided.admitted).as("no one could mask without shares").isEmpty();
  }

  /** The same, restored after the masked inputs: the unmasking decodes nothing it holds. */
  @Test
  void aRoundFromBeforeVerifiableSecretSharing_restoredAfterMasking_isReleasedWithoutASum() {
    start();
    List<Client> clients = clients(6);
    advertise(clients, 10);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    share(clients, 300);
    driver.advanceTo(SHARE_DEADLINE - 1);
    mask(clients, clients, 600);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    unmask(clients, 800);
    driver.advanceTo(DEADLINE - 2);
    store.secure.beforeVerifiableSecretSharing = true;
    for (int i = 0; i < store.secure.unmaskMessages.length; i++) {
      if (store.secure.unmaskMessages[i] != null) {
        store.secure.unmaskMessages[i] = new byte[] {(byte) 0xC3, 1, 9, 9}; // no schema of today
      }
    }

    driver.advanceTo(DEADLINE + 1);

    assertThat(decided.unmaskRequests).isEmpty();
    assertThat(decided.unmaskFailures)
        .singleElement()
        .asString()
        .contains("before this version's verifiable secret sharing");
  }

  /** A ShareKeys message re-encoded as a client of SecureMessage v3 wrote it. */
  private static byte[] asVersion3(byte[] message) throws Exception {
    org.apache.avro.Schema v3 =
        new org.apache.avro.Schema.Parser()
            .parse(new java.io.File("schemas/history/SecureMessage/v3.avsc"));
    org.apache.avro.Schema shareKeys =
        v3.getField("body").schema().getTypes().stream()
            .filter(b -> b.getName().equals("ShareKeys"))
            .findFirst()
            .orElseThrow();
    SecureMessage m = AvroCodec.decodeSecureMessage(message);
    List<org.apache.avro.generic.GenericRecord> items = new ArrayList<>();
    for (EncryptedShare e : ((ShareKeys) m.getBody()).getShares()) {
      var item =
          new org.apache.avro.generic.GenericData.Record(
              shareKeys.getField("shares").schema().getElementType());
      item.put("index", e.getIndex());
      item.put("ciphertext", e.getCiphertext());
      items.add(item);
    }
    var body = new org.apache.avro.generic.GenericData.Record(shareKeys);
    body.put("shares", items);
    var record = new org.apache.avro.generic.GenericData.Record(v3);
    record.put("jobId", m.getJobId());
    record.put("round", m.getRound());
    record.put("session", m.getSession());
    record.put("clientId", m.getClientId());
    record.put("body", body);
    return new org.apache.avro.message.BinaryMessageEncoder<org.apache.avro.generic.GenericRecord>(
            org.apache.avro.generic.GenericData.get(), v3)
        .encode(record)
        .array();
  }

  /** The commitments the job published for round 1's dealer {@code sender}, as routed. */
  private byte[] commitmentsOf(int sender) {
    return published(1, Commitments.class).stream()
        .filter(c -> c.getSender() == sender)
        .map(c -> bytes(c.getCommitments()))
        .findFirst()
        .orElseThrow();
  }

  private <T> T only(Class<T> type) {
    List<T> found = published(1, type);
    assertThat(found).as("%s messages of round 1", type.getSimpleName()).hasSize(1);
    return found.get(0);
  }

  private byte[] sessionOf(long round) {
    return decided.secureMessages.stream()
        .filter(m -> m.getRound() == round && m.getBody() instanceof Opened)
        .map(m -> bytes(m.getSession()))
        .findFirst()
        .orElseThrow();
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }

  private List<String> rejectsOf(String clientId) {
    return decided.rejectDetails.stream().filter(r -> r.startsWith(clientId + " ")).toList();
  }

  // Clients.

  /** A genuine client of round 1 with an update on the fixed-point grid (quantized exactly). */
  private final class Client {
    final String id;
    final ClientSession session;
    final float[] values;
    final long[] units;
    List<ClientSession.EncryptedShare> shares;
    byte[] masked;
    dev.privagg.secagg.UnmaskShares reveal;
    int index = -1;

    Client(int i) {
      id = "client-" + i;
      session = ClientSession.start(new RoundContext(JOB, 1, sessionOf(1)), id, THREAT, random);
      values = new float[] {(i + 1) / 16f, -(i + 1) / 32f, 1 / 64f};
      units =
          new Quantizer(1.0).quantize(new float[][] {{values[0], values[1]}, {values[2]}}, random);
      for (int j = 0; j < D; j++) {
        assertThat(units[j]).isEqualTo((long) Math.scalb((double) values[j], 36));
      }
    }

    AdvertiseKeys advertiseKeys() {
      AdvertisedKeys keys = session.advertise();
      return new AdvertiseKeys(
          ByteBuffer.wrap(keys.encryptionPublicKey()),
          ByteBuffer.wrap(keys.maskPublicKey()),
          ByteBuffer.wrap(keys.selfMaskCommitment()),
          ByteBuffer.wrap(keys.signingPublicKey()));
    }

    ShareKeys shareKeys() {
      List<EncryptedShare> out = new ArrayList<>();
      for (ClientSession.EncryptedShare s : shares) {
        out.add(new EncryptedShare(s.recipient(), ByteBuffer.wrap(s.ciphertext())));
      }
      return new ShareKeys(out, ByteBuffer.wrap(session.commitments()));
    }

    UnmaskShares unmaskShares() {
      return new UnmaskShares(revealed(reveal.selfMaskShares()), revealed(reveal.maskKeyShares()));
    }
  }

  private static List<RevealedShare> revealed(
      List<dev.privagg.secagg.UnmaskShares.RevealedShare> shares) {
    List<RevealedShare> out = new ArrayList<>();
    for (dev.privagg.secagg.UnmaskShares.RevealedShare s : shares) {
      out.add(new RevealedShare(s.index(), ByteBuffer.wrap(s.share())));
    }
    return out;
  }

  /** The ring the roster's keys derive (RosterPermutation), as the clients check it. */
  private List<Integer> derivedRing(Roster roster) {
    return java.util.Arrays.stream(
            RosterPermutation.of(new RoundContext(JOB, 1, sessionOf(1)), entries(roster)))
        .boxed()
        .toList();
  }

  /** The roster's entries as the clients read them. */
  private static List<AdvertisedKeys> entries(Roster roster) {
    List<AdvertisedKeys> entries = new ArrayList<>();
    for (RosterEntry e : roster.getEntries()) {
      entries.add(
          new AdvertisedKeys(
              bytes(e.getEncryptionPublicKey()),
              bytes(e.getMaskPublicKey()),
              bytes(e.getSelfMaskCommitment()),
              bytes(e.getSigningPublicKey())));
    }
    return entries;
  }

  /** Every client of the test's round, for the survivors who sign whoever unmasks. */
  private List<Client> everyone = List.of();

  private List<Client> clients(int n) {
    List<Client> clients = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      clients.add(new Client(i));
    }
    everyone = clients;
    return clients;
  }

  /** Reads a client's message of round 1, appended at broker time {@code at}. */
  private SecureUpdate send(String clientId, Object body, long at) {
    return send(clientId, 1, sessionOf(1), body, at);
  }

  /** As the decode step makes it: the record whole, or a masked input's values. */
  private SecureUpdate send(String clientId, long round, byte[] session, Object body, long at) {
    byte[] record =
        AvroCodec.encode(new SecureMessage(JOB, round, ByteBuffer.wrap(session), clientId, body));
    int phase =
        body instanceof AdvertiseKeys
            ? SecureUpdate.ADVERTISE
            : body instanceof ShareKeys
                ? SecureUpdate.SHARE
                : body instanceof ShareReceipt
                    ? SecureUpdate.CONFIRM
                    : body instanceof MaskedInput
                        ? SecureUpdate.MASKED_INPUT
                        : body instanceof SurvivorSignature
                            ? SecureUpdate.CONSISTENCY
                            : SecureUpdate.UNMASK;
    byte[][] values = body instanceof MaskedInput m ? new byte[][] {bytes(m.getValues())} : null;
    SecureUpdate update =
        new SecureUpdate(
            JOB,
            clientId,
            round,
            phase,
            session.clone(),
            values == null ? record : null,
            values,
            new RawUpdate("updates", 0, offset++, record));
    driver.read(update, at);
    return update;
  }

  /** Phase 1: each client advertises, client i at broker time {@code at + i}. */
  private void advertise(List<Client> clients, long at) {
    for (int i = 0; i < clients.size(); i++) {
      send(clients.get(i).id, clients.get(i).advertiseKeys(), at + i);
    }
  }

  /** Phase 2: each client takes the roster and sends its encrypted shares. */
  private void share(List<Client> clients, long at) {
    Roster roster = only(Roster.class);
    List<AdvertisedKeys> entries = entries(roster);
    int[] permutation = roster.getPermutation().stream().mapToInt(Integer::intValue).toArray();
    for (Client c : clients) {
      c.shares =
          c.session.onRoster(entries, roster.getDegree(), roster.getThreshold(), permutation);
      c.index = c.session.index();
      send(c.id, c.shareKeys(), at++);
    }
  }

  /** Phases 3 and 4 for the same clients: receipts, then masked inputs from {@code at}. */
  private void mask(List<Client> clients, long at) {
    mask(clients, clients, at);
  }

  /**
   * Phase 3: each client of {@code receipting} takes its Shares message and sends its receipt (from
   * the share deadline on); the confirm phase ends; each takes the Confirmed message; phase 4:
   * those of {@code masking} send their masked inputs, from {@code at}.
   */
  private void mask(List<Client> receipting, List<Client> masking, long at) {
    long receiptAt = SHARE_DEADLINE;
    for (Client c : receipting) {
      Shares shares =
          published(1, Shares.class).stream()
              .filter(s -> s.getRecipient() == c.index)
              .findFirst()
              .orElseThrow();
      List<ClientSession.RoutedShare> routed = new ArrayList<>();
      for (RoutedShare r : shares.getShares()) {
        routed.add(
            new ClientSession.RoutedShare(
                r.getSender(), bytes(r.getCiphertext()), commitmentsOf(r.getSender())));
      }
      assertThat(c.session.onShares(routed)).as("shares %s could not use", c.id).isEmpty();
      send(c.id, new ShareReceipt(boxed(c.session.rejectedSenders())), receiptAt++);
    }
    driver.advanceTo(CONFIRM_DEADLINE - 1);
    Confirmed confirmed = only(Confirmed.class);
    int[][] cuts =
        confirmed.getCuts().stream()
            .map(p -> new int[] {p.getLo(), p.getHi()})
            .toArray(int[][]::new);
    for (Client c : receipting) {
      c.session.onConfirmed(
          confirmed.getConfirmed().stream().mapToInt(Integer::intValue).toArray(), cuts);
    }
    for (Client c : masking) {
      sendMaskedInput(c, at++);
    }
  }

  private void sendMaskedInput(Client c, long at) {
    c.masked = c.session.maskedInput(c.units);
    send(c.id, new MaskedInput(ByteBuffer.wrap(c.masked)), at);
  }

  /**
   * Phases 5 and 6: every survivor signs the Survivors message from {@code at} on; once the job has
   * published their signatures, the clients in {@code clients} answer with their unmask shares.
   */
  private void unmask(List<Client> clients, long at) {
    Map<Integer, byte[]> signatures = sign(at);
    long later = CONSISTENCY_DEADLINE + (at - MASKED_INPUT_DEADLINE);
    for (Client c : clients) {
      c.reveal = c.session.unmask(signatures);
      send(c.id, c.unmaskShares(), later++);
    }
  }

  /**
   * Phase 5: every survivor signs the Survivors message from {@code at} on; returns the signatures
   * the job's Consistency message publishes.
   */
  private Map<Integer, byte[]> sign(long at) {
    Survivors survivors = only(Survivors.class);
    int[] shared = survivors.getShared().stream().mapToInt(Integer::intValue).toArray();
    int[] masked = survivors.getMaskedInput().stream().mapToInt(Integer::intValue).toArray();
    long time = at;
    for (Client c : everyone) {
      if (c.masked != null && IntStream.of(masked).anyMatch(i -> i == c.index)) {
        byte[] signature = c.session.signSurvivors(shared, masked);
        send(c.id, new SurvivorSignature(ByteBuffer.wrap(signature)), time++);
      }
    }
    driver.advanceTo(CONSISTENCY_DEADLINE - 1);
    Map<Integer, byte[]> signatures = new HashMap<>();
    for (SignedSurvivors signed : only(Consistency.class).getSignatures()) {
      signatures.put(signed.getIndex(), bytes(signed.getSignature()));
    }
    return signatures;
  }

  /**
   * A round of {@code n} clients whose ShareKeys are all read (stamped from 300), with event time
   * still in phase 2.
   */
  private List<Client> sharedRound(int n) {
    start();
    List<Client> clients = clients(n);
    advertise(clients, 10);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    share(clients, 300);
    return clients;
  }

  private static long[] words(byte[] littleEndian) {
    long[] words = new long[littleEndian.length / 8];
    ByteBuffer.wrap(littleEndian).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(words);
    return words;
  }

  private static int[] indices(List<Client> clients) {
    return clients.stream().mapToInt(c -> c.index).sorted().toArray();
  }

  private static List<Integer> boxed(int... values) {
    return IntStream.of(values).boxed().toList();
  }

  // Opening.

  @Test
  void openingARound_drawsA16ByteSession_andPublishesTheDeadlinesOfEachPhase() {
    start();

    SecureRound opened = decided.secureMessages.get(0);
    assertThat(opened.getJobId()).isEqualTo(JOB);
    assertThat(opened.getRound()).isEqualTo(1L);
    assertThat(bytes(opened.getSession())).hasSize(16).isEqualTo(store.secure.session);
    assertThat(opened.getBody())
        .isEqualTo(
            new Opened(
                ADVERTISE_DEADLINE,
                SHARE_DEADLINE,
                CONFIRM_DEADLINE,
                MASKED_INPUT_DEADLINE,
                CONSISTENCY_DEADLINE,
                DEADLINE,
                1.0,
                null));
    assertThat(decided.announced).containsExactly("1 until " + DEADLINE);
    assertThat(decided.timers)
        .as("each phase ends on a timer one millisecond before its deadline, as rounds do")
        .containsExactly(
            ADVERTISE_DEADLINE - 1,
            SHARE_DEADLINE - 1,
            CONFIRM_DEADLINE - 1,
            MASKED_INPUT_DEADLINE - 1,
            CONSISTENCY_DEADLINE - 1,
            DEADLINE - 1);
  }

  @Test
  void phasesDeclaredInTheSpec_setTheDeadlines_fromTheRoundsOpening() {
    JobSpec declared =
        JobFixtures.spec(
            EXACT,
            GATE,
            "aggregation: {mode: secure, phases: {advertise: 100ms, share: 200ms,"
                + " confirm: 50ms, maskedInput: 300ms, consistency: 100ms}}");
    driver.start(declared, NoiseSources.forSpec(declared), LedgerFloor.NONE, 0);

    assertThat(driver.decided.secureMessages.get(0).getBody())
        .isEqualTo(new Opened(100L, 300L, 350L, 650L, 750L, DEADLINE, 1.0, null));
  }

  // The whole round.

  @Test
  void sixClients_oneDroppingAfterItsReceipt_unmaskToExactlyTheSurvivorsSum_andReleaseTheirModel() {
    start(new ShardPlan(3));
    List<Client> clients = clients(6);
    // Read in reverse, but appended in client order: the roster follows broker time.
    for (int i = clients.size() - 1; i >= 0; i--) {
      send(clients.get(i).id, clients.get(i).advertiseKeys(), 10 + i);
    }
    driver.advanceTo(ADVERTISE_DEADLINE - 1);

    // Phase 2 opens with the roster: the clients in admission order, on FCP's Harary graph.
    Roster roster = only(Roster.class);
    assertThat(roster.getEntries()).hasSize(6);
    for (int i = 0; i < 6; i++) {
      AdvertiseKeys keys = clients.get(i).advertiseKeys();
      RosterEntry entry = roster.getEntries().get(i);
      assertThat(entry.getEncryptionPublicKey()).isEqualTo(keys.getEncryptionPublicKey());
      assertThat(entry.getMaskPublicKey()).isEqualTo(keys.getMaskPublicKey());
      assertThat(entry.getSelfMaskCommitment()).isEqualTo(keys.getSelfMaskCommitment());
    }
    RoundThresholds.Choice sparse = RoundThresholds.choose(6, THREAT).orElseThrow();
    assertThat(sparse.complete()).isFalse();
    assertThat(roster.getDegree()).isEqualTo(sparse.neighbourhoodSize()).isLessThan(6);
    assertThat(roster.getThreshold()).isEqualTo(sparse.threshold());
    assertThat(roster.getPermutation()).containsExactlyElementsOf(derivedRing(roster));
    assertThat(store.secure.phase).isEqualTo(SecureUpdate.SHARE);

    share(clients, 300);
    assertThat(decided.rejects).isEmpty();
    driver.advanceTo(SHARE_DEADLINE - 1);

    // Phase 3 opens with one Shares message per client, holding exactly what was sent to it.
    List<Shares> shares = published(1, Shares.class);
    assertThat(shares).extracting(Shares::getRecipient).containsExactly(0, 1, 2, 3, 4, 5);
    for (Shares inbox : shares) {
      Map<Integer, byte[]> expected = new HashMap<>();
      for (Client sender : clients) {
        for (ClientSession.EncryptedShare s : sender.shares) {
          if (s.recipient() == inbox.getRecipient()) {
            expected.put(sender.index, s.ciphertext());
          }
        }
      }
      assertThat(expected).hasSize(roster.getDegree() - 1);
      assertThat(inbox.getShares()).hasSize(expected.size());
      for (RoutedShare r : inbox.getShares()) {
        assertThat(bytes(r.getCiphertext())).isEqualTo(expected.get(r.getSender()));
      }
    }

    List<Client> survivors = clients.subList(0, 5); // client-5 drops after its receipt
    mask(clients, survivors, 600);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    assertThat(decided.admitted)
        .as("masked inputs are admitted; keys and shares are not updates")
        .containsExactly("client-0", "client-1", "client-2", "client-3", "client-4");
    Survivors announced = only(Survivors.class);
    assertThat(announced.getShared()).containsExactly(0, 1, 2, 3, 4, 5);
    assertThat(announced.getMaskedInput()).isEqualTo(boxed(indices(survivors)));

    unmask(survivors, 800);
    assertThat(decided.rejects).isEmpty();
    driver.advanceTo(DEADLINE - 1);

    // At the deadline: one request per unmask block, the blocks tiling the model.
    List<UnmaskRequest> requests = decided.unmaskRequests;
    assertThat(requests)
        .extracting(r -> r.blockKey)
        .containsExactly(new ShardPlan(3).blockKeys(JOB + "#unmask"));
    assertThat(requests).extracting(r -> r.offset).containsExactly(0, 1, 2);
    assertThat(requests).extracting(r -> r.length).containsExactly(1, 1, 1);
    assertThat(requests).allSatisfy(r -> assertThat(r.terms).isEqualTo(requests.get(0).terms));
    // Corrections: every survivor's self-mask and every survivor's pairwise mask with client-5.
    MaskCorrection correction = decode(requests.get(0).terms);
    int droppedNeighbours = roster.getDegree() - 1;
    assertThat(correction.terms()).hasSize(survivors.size() + droppedNeighbours);

    long[] sum = new long[D];
    for (Client c : survivors) {
      long[] y = words(c.masked);
      for (int j = 0; j < D; j++) {
        sum[j] += y[j];
      }
    }
    long[] wholeRange = sum.clone();
    correction.applyTo(wholeRange, 0, D);
    long[] byBlocks = sum.clone();
    for (UnmaskRequest r : requests) {
      RoundPartial block = new UnmaskBlockFunction().map(r);
      assertThat(block.unitsOffset).isEqualTo(r.offset);
      for (int j = 0; j < block.units.length; j++) {
        byBlocks[block.unitsOffset + j] += block.units[j];
      }
    }
    long[] plain = new long[D];
    for (Client c : survivors) {
      for (int j = 0; j < D; j++) {
        plain[j] += c.units[j];
      }
    }
    assertThat(wholeRange).isEqualTo(plain);
    assertThat(byBlocks).isEqualTo(plain);
    assertThat(decided.unmaskFailures).isEmpty();

    // The release: charged with the five, and the model the plaintext job releases from them.
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(5L);
    assertThat(decided.released).containsExactly(1L);
    assertThat(decided.models).hasSize(1);
    assertThat(decided.models.get(0)).isEqualTo(plaintextModel(survivors));
  }

  /** The terms as an unmask request carries them: a sign byte and a 32-byte key each. */
  private static MaskCorrection decode(byte[] terms) {
    assertThat(terms.length % 33).isZero();
    List<MaskCorrection.Term> list = new ArrayList<>();
    for (int t = 0; t < terms.length; t += 33) {
      list.add(new MaskCorrection.Term(Arrays.copyOfRange(terms, t + 1, t + 33), terms[t]));
    }
    return new MaskCorrection(list);
  }

  /** What a plaintext job with the same spec releases from the same updates. */
  private float[] plaintextModel(List<Client> members) {
    JobSpec plain = JobFixtures.exactSpec("");
    LifecycleDriver plaintext = LifecycleDriver.releasing();
    plaintext.start(plain, NoiseSources.forSpec(plain), LedgerFloor.NONE, 0);
    long at = 600;
    for (Client c : members) {
      plaintext.read(
          JobFixtures.readFrom(
              0, at, JobFixtures.update(c.id, 1, c.values[0], c.values[1], c.values[2])),
          at++);
    }
    plaintext.advanceTo(DEADLINE - 1);
    assertThat(plaintext.decided.models).hasSize(1);
    return plaintext.decided.models.get(0);
  }

  @Test
  void fiveClients_getTheCompleteGraph_atTheSmallestThresholdTheFullGraphRulesAllow() {
    start();
    List<Client> clients = clients(5);
    advertise(clients, 10);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);

    Roster roster = only(Roster.class);
    assertThat(RoundThresholds.choose(5, THREAT).orElseThrow().complete())
        .as("no sparse graph for five")
        .isTrue();
    assertThat(roster.getDegree()).as("k = n: the complete graph").isEqualTo(5);
    assertThat(roster.getPermutation()).containsExactly(0, 1, 2, 3, 4);
    // Above the A = 0 colluders, and at most n - (D + 1) - (A + 1) = 2: D = 1 client may drop
    // out, one more may fail, and one may reject the shares of another.
    assertThat(roster.getThreshold()).isEqualTo(2);

    share(clients, 300);
    driver.advanceTo(SHARE_DEADLINE - 1);
    mask(clients, 600);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    unmask(clients, 800);
    driver.advanceTo(DEADLINE - 1);

    assertThat(decided.rejects).isEmpty();
    assertThat(decided.unmaskFailures).isEmpty();
    assertThat(decode(decided.unmaskRequests.get(0).terms).terms())
        .as("only self-masks: with nobody dropped the pairwise masks cancel")
        .hasSize(5);
    assertThat(decided.models.get(0)).isEqualTo(plaintextModel(clients));
  }

  // Rejects: each SECURE_PROTOCOL with the detail.

  @Test
  void messageWithAnotherSession_isRejected_pointingToTheOpenedMessage() {
    start();
    Client c = clients(1).get(0);
    byte[] other = sessionOf(1).clone();
    other[0] ^= 1;

    send(c.id, 1, other, c.advertiseKeys(), 10);
    driver.advanceTo(10);

    assertThat(rejectsOf(c.id))
        .containsExactly(
            c.id
                + " SECURE_PROTOCOL: session is not round 1's (read it from the round's Opened"
                + " message)");
    assertThat(store.secure.size()).isZero();
  }

  @Test
  void messageForAPhaseThatIsNotOpen_isRejected_tooEarlyOrTooLateByBrokerTime() {
    sharedRound(5);
    Client late = new Client(7);
    // Advertising after the advertise deadline, and a second ShareKeys stamped in phase 3.
    send(late.id, late.advertiseKeys(), SHARE_DEADLINE + 10);
    // A masked input before its phase: stamped in phase 2.
    send("client-0", new MaskedInput(ByteBuffer.wrap(new byte[8 * D])), SHARE_DEADLINE - 100);
    driver.advanceTo(SHARE_DEADLINE + 10);

    assertThat(rejectsOf("client-0"))
        .containsExactly(
            "client-0 SECURE_PROTOCOL: a phase 4 message at broker time 400, while round 1 takes"
                + " phase 2 until 500 messages");
    assertThat(rejectsOf(late.id))
        .containsExactly(
            late.id
                + " SECURE_PROTOCOL: a phase 1 message at broker time 510, while round 1 takes"
                + " phase 3 until 600 messages");
    assertThat(decided.admitted).isEmpty();
  }

  @Test
  void aMessageStampedBeforeItsPhaseOpened_isRejected_evenWhenReadAfterEventTimePassedIt() {
    // The broker's clock stepped back: a receipt stamped in phase 2 is read once event time is in
    // phase 3, and is decided at once. It must get the answer it gets when read in its turn
    // (membership is a function of the log, not of when a record is read).
    sharedRound(5);
    driver.advanceTo(SHARE_DEADLINE + 50);
    send("client-0", new ShareReceipt(List.of()), SHARE_DEADLINE - 100);

    assertThat(rejectsOf("client-0"))
        .singleElement()
        .asString()
        .isEqualTo(
            "client-0 SECURE_PROTOCOL: a phase 3 message at broker time 400, before round 1's"
                + " phase 3 opened at 500");
    assertThat(java.util.Arrays.asList(store.secure.receipts)).containsOnlyNulls();
  }

  @Test
  void aPhaseTakesMessagesStampedBeforeItsDeadline_notAtIt() {
    start();
    List<Client> clients = clients(6);
    send(clients.get(0).id, clients.get(0).advertiseKeys(), 0);
    for (int i = 1; i < 4; i++) {
      send(clients.get(i).id, clients.get(i).advertiseKeys(), i);
    }
    send(clients.get(4).id, clients.get(4).advertiseKeys(), ADVERTISE_DEADLINE - 1);
    send(clients.get(5).id, clients.get(5).advertiseKeys(), ADVERTISE_DEADLINE);
    driver.advanceTo(ADVERTISE_DEADLINE);

    assertThat(only(Roster.class).getEntries()).hasSize(5);
    assertThat(rejectsOf(clients.get(5).id))
        .containsExactly(
            "client-5 SECURE_PROTOCOL: a phase 1 message at broker time 250, while round 1 takes"
                + " phase 2 until 500 messages");
  }

  @Test
  void messagesFromAClientNotOnTheRoster_areRejected_inEveryLaterPhase() {
    List<Client> clients = sharedRound(5);
    // A stranger replays client-0's messages under its own id.
    send("stranger", clients.get(0).shareKeys(), SHARE_DEADLINE - 10);
    driver.advanceTo(SHARE_DEADLINE - 1);
    mask(clients, 600);
    send("stranger", new MaskedInput(ByteBuffer.wrap(clients.get(0).masked)), 610);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    send("stranger", new SurvivorSignature(ByteBuffer.wrap(new byte[64])), 760);
    unmask(clients, 800);
    send("stranger", clients.get(0).unmaskShares(), 910);
    driver.advanceTo(DEADLINE - 1);

    assertThat(rejectsOf("stranger"))
        .containsExactly(
            "stranger SECURE_PROTOCOL: client stranger is not on round 1's roster",
            "stranger SECURE_PROTOCOL: client stranger is not on round 1's roster",
            "stranger SECURE_PROTOCOL: client stranger is not on round 1's roster",
            "stranger SECURE_PROTOCOL: client stranger is not on round 1's roster");
    assertThat(decided.admitted).doesNotContain("stranger").hasSize(5);
    assertThat(decided.models.get(0)).isEqualTo(plaintextModel(clients));
  }

  @Test
  void aSecondMessageOfAPhase_isRejected_andTheFirstStands() {
    List<Client> clients = sharedRound(5);
    Client first = clients.get(0);
    send(first.id, first.shareKeys(), SHARE_DEADLINE - 10); // in phase 2, after its first
    driver.advanceTo(SHARE_DEADLINE - 1);
    mask(clients, 600);
    send(first.id, new MaskedInput(ByteBuffer.wrap(first.masked)), 700);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    unmask(clients, 800);
    send(first.id, first.unmaskShares(), 900);
    driver.advanceTo(DEADLINE - 1);

    assertThat(rejectsOf(first.id))
        .containsExactly(
            "client-0 SECURE_PROTOCOL: already sent its shares",
            "client-0 SECURE_PROTOCOL: already sent its masked input",
            "client-0 SECURE_PROTOCOL: already sent its unmask shares");
    assertThat(decided.admitted)
        .containsExactly("client-0", "client-1", "client-2", "client-3", "client-4");
    assertThat(decided.models.get(0)).isEqualTo(plaintextModel(clients));
  }

  /** Six clients advertise; client 0 takes the Roster the job publishes and makes its shares. */
  private List<Client> sixClientsWithClientZeroOnItsRoster() {
    start();
    List<Client> clients = clients(6);
    advertise(clients, 10);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    Roster roster = only(Roster.class);
    int[] permutation = roster.getPermutation().stream().mapToInt(Integer::intValue).toArray();
    List<AdvertisedKeys> entries = clients.stream().map(c -> c.session.advertise()).toList();
    Client sender = clients.get(0);
    sender.shares =
        sender.session.onRoster(entries, roster.getDegree(), roster.getThreshold(), permutation);
    return clients;
  }

  /**
   * Review 4: libsodium adds non-canonical encodings as if canonical, so a dealer committing to
   * {@code 01 00..00 80} (x = 0 with the sign bit) or y = p + 1 had Python holders accept shares
   * the job's Java check refuses, and got them named as liars. Such ShareKeys are refused at once.
   */
  @Test
  void shareKeysWithANonCanonicalCommitment_areRejected_beforeAnyHolderChecksAShare() {
    Client sender = sixClientsWithClientZeroOnItsRoster().get(0);
    ShareKeys genuine = sender.shareKeys();
    byte[] signedIdentity = new byte[32];
    signedIdentity[0] = 1;
    signedIdentity[31] = (byte) 0x80;
    byte[] yAboveP = new byte[32]; // p + 1 = 2^255 - 18, little-endian
    Arrays.fill(yAboveP, (byte) 0xff);
    yAboveP[0] = (byte) 0xee;
    yAboveP[31] = 0x7f;
    long at = 300;
    for (byte[] point : List.of(signedIdentity, yAboveP)) {
      byte[] commitments = dev.privagg.io.Float32.bytes(genuine.getCommitments()).clone();
      System.arraycopy(point, 0, commitments, 32, 32);
      send(sender.id, new ShareKeys(genuine.getShares(), ByteBuffer.wrap(commitments)), at++);
    }
    send(sender.id, genuine, at++);
    driver.advanceTo(at);

    assertThat(rejectsOf(sender.id))
        .containsExactly(
            "client-0 SECURE_PROTOCOL: commitment 1 is not the canonical encoding of a point of"
                + " edwards25519",
            "client-0 SECURE_PROTOCOL: commitment 1 is not the canonical encoding of a point of"
                + " edwards25519");
    assertThat(store.secure.shareMessages[0]).as("the genuine ShareKeys is taken").isNotNull();
  }

  @Test
  void shareKeysMissingANeighbour_addressedToANonNeighbourOrRepeated_areRejected() {
    List<Client> clients = sixClientsWithClientZeroOnItsRoster();
    Roster roster = only(Roster.class);
    int[] permutation = roster.getPermutation().stream().mapToInt(Integer::intValue).toArray();
    var graph = dev.privagg.secagg.HararyGraph.ofNeighbourhoodSize(roster.getDegree(), permutation);
    Client sender = clients.get(0);
    List<EncryptedShare> genuine = sender.shareKeys().getShares();
    int neighbours = genuine.size();
    int nonNeighbour =
        IntStream.range(1, 6).filter(v -> !graph.areNeighbours(0, v)).findFirst().orElseThrow();

    List<EncryptedShare> missing = new ArrayList<>(genuine.subList(1, neighbours));
    List<EncryptedShare> stranger = new ArrayList<>(genuine);
    stranger.set(0, new EncryptedShare(nonNeighbour, genuine.get(0).getCiphertext()));
    List<EncryptedShare> itself = new ArrayList<>(genuine);
    itself.set(0, new EncryptedShare(0, genuine.get(0).getCiphertext()));
    List<EncryptedShare> repeated = new ArrayList<>(genuine);
    repeated.set(1, genuine.get(0));
    List<EncryptedShare> extra = new ArrayList<>(genuine);
    extra.add(new EncryptedShare(nonNeighbour, genuine.get(0).getCiphertext()));
    long at = 300;
    for (List<EncryptedShare> spoiled : List.of(missing, stranger, itself, repeated, extra)) {
      send(sender.id, new ShareKeys(spoiled, sender.shareKeys().getCommitments()), at++);
    }
    driver.advanceTo(at);

    int first = genuine.get(0).getIndex();
    assertThat(rejectsOf(sender.id))
        .containsExactly(
            "client-0 SECURE_PROTOCOL: shares go to "
                + (neighbours - 1)
                + " of "
                + neighbours
                + " neighbours",
            "client-0 SECURE_PROTOCOL: shares must go once to each of the sender's "
                + neighbours
                + " neighbours, but index "
                + nonNeighbour
                + " is not one of them",
            "client-0 SECURE_PROTOCOL: shares must go once to each of the sender's "
                + neighbours
                + " neighbours, but index 0 is not one of them",
            "client-0 SECURE_PROTOCOL: shares must go once to each of the sender's "
                + neighbours
                + " neighbours, but index "
                + first
                + " is repeated",
            "client-0 SECURE_PROTOCOL: shares must go once to each of the sender's "
                + neighbours
                + " neighbours, but index "
                + nonNeighbour
                + " is not one of them");
    assertThat(neighbours).isEqualTo(roster.getDegree() - 1).isLessThan(5);
    // None was kept: the genuine message is still taken.
    send(sender.id, sender.shareKeys(), at + 1);
    driver.advanceTo(at + 1);
    assertThat(rejectsOf(sender.id)).hasSize(5);
    assertThat(store.secure.shareMessages[0]).isNotNull();
  }

  @Test
  void aClientSendingJunkShares_isNamedAndLeavesBeforeMasking_andTheOthersSumIsUnmasked() {
    // Issue 32, item 3: junk ciphertexts from one client made every round noise-only.
    start();
    List<Client> clients = clients(6);
    advertise(clients, 10);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    Roster roster = only(Roster.class);
    List<AdvertisedKeys> entries = entries(roster);
    int[] permutation = roster.getPermutation().stream().mapToInt(Integer::intValue).toArray();
    Client junk = clients.get(3);
    java.util.Random bytes = new java.util.Random(3);
    for (Client c : clients) {
      c.shares =
          c.session.onRoster(entries, roster.getDegree(), roster.getThreshold(), permutation);
      c.index = c.session.index();
      ShareKeys message = c.shareKeys();
      if (c == junk) {
        List<EncryptedShare> garbage = new ArrayList<>();
        for (ClientSession.EncryptedShare s : c.shares) {
          byte[] b = new byte[s.ciphertext().length];
          bytes.nextBytes(b);
          garbage.add(new EncryptedShare(s.recipient(), ByteBuffer.wrap(b)));
        }
        message = new ShareKeys(garbage, message.getCommitments());
      }
      send(c.id, message, 300 + c.index);
    }
    driver.advanceTo(SHARE_DEADLINE - 1);
    List<Client> others = clients.stream().filter(c -> c != junk).toList();
    for (Client c : clients) {
      Shares inbox =
          published(1, Shares.class).stream()
              .filter(s -> s.getRecipient() == c.index)
              .findFirst()
              .orElseThrow();
      List<ClientSession.RoutedShare> routed = new ArrayList<>();
      for (RoutedShare r : inbox.getShares()) {
        routed.add(
            new ClientSession.RoutedShare(
                r.getSender(), bytes(r.getCiphertext()), commitmentsOf(r.getSender())));
      }
      c.session.onShares(routed);
      send(c.id, new ShareReceipt(boxed(c.session.rejectedSenders())), SHARE_DEADLINE + c.index);
    }
    driver.advanceTo(CONFIRM_DEADLINE - 1);

    Confirmed confirmed = only(Confirmed.class);
    assertThat(confirmed.getConfirmed()).doesNotContain(junk.index).hasSize(5);
    assertThat(confirmed.getCuts()).isEmpty();
    assertThat(decided.misbehaved)
        .singleElement()
        .asString()
        .startsWith(junk.id + " at " + junk.id + "@0/")
        .contains("its shares were rejected by more than 1 neighbours (r = 0 colluders");
    int[] confirmedIndices =
        confirmed.getConfirmed().stream().mapToInt(Integer::intValue).toArray();
    assertThatThrownBy(() -> junk.session.onConfirmed(confirmedIndices, new int[0][]))
        .hasMessageStartingWith(junk.id + ": not confirmed for round 1");
    for (Client c : others) {
      c.session.onConfirmed(confirmedIndices, new int[0][]);
      sendMaskedInput(c, 600 + c.index);
    }
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    unmask(others, 800);
    driver.advanceTo(DEADLINE - 1);

    assertThat(decided.unmaskFailures).isEmpty();
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(5L);
    assertThat(decided.released).containsExactly(1L);
  }

  @Test
  void maskedInputFromAClientThatDidNotShare_isRejected_andNeverReachesItsShard() {
    start();
    List<Client> clients = clients(5);
    advertise(clients, 10);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    share(clients.subList(0, 2), 300); // client-2 takes the roster too late to share
    driver.advanceTo(SHARE_DEADLINE - 1);
    assertThat(published(1, Shares.class))
        .as("only clients who shared are routed shares")
        .extracting(Shares::getRecipient)
        .containsExactly(0, 1);
    send("client-2", new MaskedInput(ByteBuffer.wrap(new byte[8 * D])), 600);
    mask(clients.subList(0, 2), 610);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);

    assertThat(rejectsOf("client-2"))
        .containsExactly(
            "client-2 SECURE_PROTOCOL: was not confirmed in phase 3 (no receipt, or removed), so"
                + " no one masked with it");
    assertThat(decided.admitted).containsExactly("client-0", "client-1");
    Survivors survivors = only(Survivors.class);
    assertThat(survivors.getShared()).containsExactly(0, 1);
    assertThat(survivors.getMaskedInput()).containsExactly(0, 1);
  }

  @Test
  void unmaskSharesFromAClientWithoutAMaskedInput_areRejected() {
    List<Client> clients = sharedRound(6);
    driver.advanceTo(SHARE_DEADLINE - 1);
    mask(clients, clients.subList(0, 5), 600);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    Client dropped = clients.get(5);
    // It never sent its masked input, but answers the Survivors message with shares it holds.
    send(dropped.id, new UnmaskShares(List.of(), List.of()), 900);
    driver.advanceTo(900);

    assertThat(rejectsOf(dropped.id))
        .containsExactly(
            "client-5 SECURE_PROTOCOL: sent no masked input, so it takes no part in unmasking");
  }

  @Test
  void unmaskRevealingTheSelfMaskOfADroppedClient_orTheMaskKeyOfASurvivor_isRejected() {
    List<Client> clients = sharedRound(6);
    driver.advanceTo(SHARE_DEADLINE - 1);
    List<Client> survivors = clients.subList(0, 5);
    mask(clients, survivors, 600);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    Survivors announced = only(Survivors.class);
    int[] shared = announced.getShared().stream().mapToInt(Integer::intValue).toArray();
    int[] masked = announced.getMaskedInput().stream().mapToInt(Integer::intValue).toArray();
    // A holder of client-5's shares: its neighbour.
    int[] permutation =
        only(Roster.class).getPermutation().stream().mapToInt(Integer::intValue).toArray();
    var graph =
        dev.privagg.secagg.HararyGraph.ofNeighbourhoodSize(
            only(Roster.class).getDegree(), permutation);
    Client holder =
        survivors.stream().filter(c -> graph.areNeighbours(c.index, 5)).findFirst().orElseThrow();
    Client other =
        survivors.stream()
            .filter(c -> graph.areNeighbours(c.index, holder.index))
            .findFirst()
            .orElseThrow();
    holder.reveal = holder.session.unmask(sign(800));
    UnmaskShares genuine = holder.unmaskShares();
    RevealedShare ofDropped = genuine.getMaskKeyShares().get(0);
    assertThat(ofDropped.getIndex()).isEqualTo(5);
    RevealedShare ofSurvivor =
        genuine.getSelfMaskShares().stream()
            .filter(r -> r.getIndex() == other.index)
            .findFirst()
            .orElseThrow();

    // Both shares of client-5: its self-mask seed too would unmask its input.
    List<RevealedShare> selfMaskOfDropped = new ArrayList<>(genuine.getSelfMaskShares());
    selfMaskOfDropped.add(new RevealedShare(5, ofDropped.getShare()));
    send(holder.id, new UnmaskShares(selfMaskOfDropped, genuine.getMaskKeyShares()), 900);
    // The mask key of a survivor: with its self-mask seed, that would unmask its input.
    List<RevealedShare> maskKeyOfSurvivor = new ArrayList<>(genuine.getMaskKeyShares());
    maskKeyOfSurvivor.add(new RevealedShare(other.index, ofSurvivor.getShare()));
    List<RevealedShare> withoutIt = new ArrayList<>(genuine.getSelfMaskShares());
    withoutIt.remove(ofSurvivor);
    send(holder.id, new UnmaskShares(withoutIt, maskKeyOfSurvivor), 901);
    // A neighbour's share twice.
    List<RevealedShare> twice = new ArrayList<>(genuine.getSelfMaskShares());
    twice.add(ofSurvivor);
    send(holder.id, new UnmaskShares(twice, genuine.getMaskKeyShares()), 902);
    driver.advanceTo(902);

    assertThat(rejectsOf(holder.id))
        .containsExactly(
            holder.id
                + " SECURE_PROTOCOL: a self-mask share for index 5, which is not a surviving"
                + " neighbour",
            holder.id
                + " SECURE_PROTOCOL: a mask-key share for index "
                + other.index
                + ", which is not a dropped neighbour",
            holder.id
                + " SECURE_PROTOCOL: a self-mask share for index "
                + other.index
                + ", which is not a surviving neighbour");
    assertThat(store.secure.unmaskMessages[holder.index]).isNull();
  }

  @Test
  void aRepeatedEncryptionKeyAtAdvertise_isRejected_soNoTwoEntriesShareAnIndex() {
    start();
    List<Client> clients = clients(2);
    send("client-0", clients.get(0).advertiseKeys(), 10);
    // Another client advertises client-0's encryption key beside its own mask key.
    AdvertiseKeys own = clients.get(1).advertiseKeys();
    send(
        "copycat",
        new AdvertiseKeys(
            clients.get(0).advertiseKeys().getEncryptionPublicKey(),
            own.getMaskPublicKey(),
            own.getSelfMaskCommitment(),
            own.getSigningPublicKey()),
        11);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);

    assertThat(rejectsOf("copycat"))
        .containsExactly(
            "copycat SECURE_PROTOCOL: its encryption public key is already on round 1's roster");
    assertThat(store.secure.size()).isEqualTo(1);
  }

  @Test
  void aSecondAdvertiseOfOneClient_isADuplicate_andKeepsItsFirstKeys() {
    start();
    List<Client> clients = clients(2);
    send("client-0", clients.get(0).advertiseKeys(), 10);
    send("client-0", clients.get(1).advertiseKeys(), 11);
    driver.advanceTo(100);

    assertThat(decided.rejects).containsExactly("client-0 DUPLICATE_CLIENT");
    assertThat(store.secure.size()).isEqualTo(1);
    assertThat(Arrays.copyOfRange(store.secure.advertised[0], 0, 32))
        .isEqualTo(clients.get(0).session.advertise().encryptionPublicKey());
  }

  // Failures and empty rounds.

  @Test
  void tooFewUnmaskResponses_failTheUnmasking_discardTheShardSums_andReleaseNoiseOnly() {
    List<Client> clients = sharedRound(5); // the complete graph, threshold 2
    driver.advanceTo(SHARE_DEADLINE - 1);
    mask(clients, 600);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    unmask(clients.subList(0, 1), 800); // clients 1 to 4 drop before unmasking
    driver.advanceTo(DEADLINE - 1);

    assertThat(decided.unmaskFailures)
        .singleElement()
        .asString()
        .startsWith("1: too few consistent shares (threshold 2) for the self-mask seeds of")
        .contains("[0, 1, 2, 3, 4]");
    assertThat(decided.unmaskRequests).isEmpty();
    assertThat(decided.discarded).containsExactly(1L);
    assertThat(decided.shardStores.values())
        .as("the shards dropped what they summed")
        .allSatisfy(s -> assertThat(s.rounds.byRound).isEmpty());
    // Released all the same (whether a round is released must not depend on who sent what),
    // charged, with no sum: with no noise the model stays as it was.
    assertThat(decided.released).containsExactly(1L);
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(0L);
    assertThat(decided.closed.get(0).charge()).isNotNull();
    assertThat(decided.models.get(0)).isEqualTo(spec.initialWeights());
  }

  @Test
  void anEmptyRoster_publishesNoRoster_andTheNoisyCountWithholdsTheRound() {
    start();
    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    assertThat(store.secure.phase).as("past every phase").isEqualTo(SecureUpdate.UNMASK + 1);
    decided.timers.clear();
    driver.lifecycle.keepAlive(store, decided);
    assertThat(decided.timers).as("no phase timer is left").containsExactly(DEADLINE - 1);
    driver.advanceTo(DEADLINE - 1);

    assertThat(published(1, Roster.class)).isEmpty();
    // Charged, and withheld as a plaintext round under its minimum cohort: nothing to unmask.
    assertThat(decided.released).isEmpty();
    assertThat(decided.withheld).containsExactly(1L);
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(0L);
    assertThat(decided.unmaskRequests).isEmpty();
    assertThat(decided.unmaskFailures).isEmpty();
  }

  @Test
  void aRosterOfOne_getsARosterOfDegreeZero_itsLaterMessagesAreRejected_andTheRoundIsWithheld() {
    start();
    Client alone = clients(1).get(0);
    advertise(List.of(alone), 10);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    send(alone.id, new ShareKeys(List.of(), ByteBuffer.allocate(0)), 300);
    driver.advanceTo(DEADLINE - 1);

    // Degree 0: no graph, so the lone client stops at once instead of waiting for its timeout.
    assertThat(published(1, Roster.class))
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getDegree()).isZero();
              assertThat(r.getThreshold()).isZero();
              assertThat(r.getPermutation()).isEmpty();
              assertThat(r.getEntries()).hasSize(1);
            });
    assertThat(rejectsOf(alone.id))
        .containsExactly(
            "client-0 SECURE_PROTOCOL: a phase 2 message at broker time 300, while round 1 takes"
                + " phase 7 no more messages");
    assertThat(decided.released).isEmpty();
    assertThat(decided.withheld).containsExactly(1L);
    assertThat(decided.closed).extracting(ClosedRound::contributions).containsExactly(0L);
  }

  // Timers and state.

  @Test
  void keepAlive_afterADrain_rearmsThePhaseTimersStillToCome() {
    start();
    advertise(clients(5), 10);
    driver.advanceTo(20);
    decided.timers.clear(); // a drain's savepoint holds no timers
    driver.lifecycle.keepAlive(store, decided);
    assertThat(decided.timers)
        .containsExactly(
            ADVERTISE_DEADLINE - 1,
            SHARE_DEADLINE - 1,
            CONFIRM_DEADLINE - 1,
            MASKED_INPUT_DEADLINE - 1,
            CONSISTENCY_DEADLINE - 1,
            DEADLINE - 1);

    driver.advanceTo(ADVERTISE_DEADLINE - 1);
    decided.timers.clear();
    driver.lifecycle.keepAlive(store, decided);
    assertThat(decided.timers)
        .as("the advertise phase has ended")
        .containsExactly(
            SHARE_DEADLINE - 1,
            CONFIRM_DEADLINE - 1,
            MASKED_INPUT_DEADLINE - 1,
            CONSISTENCY_DEADLINE - 1,
            DEADLINE - 1);

    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    decided.timers.clear();
    driver.lifecycle.keepAlive(store, decided);
    assertThat(decided.timers).containsExactly(CONSISTENCY_DEADLINE - 1, DEADLINE - 1);
  }

  @Test
  void closingTheRound_dropsItsSecureState_andTheNextRoundDrawsANewSession() {
    List<Client> clients = sharedRound(5);
    driver.advanceTo(SHARE_DEADLINE - 1);
    mask(clients, 600);
    driver.advanceTo(MASKED_INPUT_DEADLINE - 1);
    unmask(clients, 800);
    byte[] first = sessionOf(1);
    driver.advanceTo(DEADLINE - 1);

    assertThat(store.secure.round).isEqualTo(2L);
    assertThat(store.secure.session).hasSize(16).isEqualTo(sessionOf(2)).isNotEqualTo(first);
    assertThat(store.secure.size()).isZero();
    assertThat(store.secure.phase).isEqualTo(SecureUpdate.ADVERTISE);
    assertThat(published(2, Opened.class))
        .containsExactly(new Opened(1250L, 1500L, 1600L, 1750L, 1850L, 2000L, 1.0, null));
    // A round-1 message after the close is stale, whatever its phase.
    send("client-0", 1, first, clients.get(0).unmaskShares(), DEADLINE + 10);
    driver.advanceTo(DEADLINE + 10);
    assertThat(decided.rejects).containsExactly("client-0 STALE_ROUND");
  }

  @Test
  void anExhaustedBudget_clearsTheSecureStateWithTheRound() {
    JobSpec oneRound =
        JobFixtures.spec("noiseMultiplier: 1.0\nbudgetEpsilon: 1.0e-9", GATE, SECURE);
    driver.start(oneRound, NoiseSources.forSpec(oneRound), LedgerFloor.NONE, 0);

    assertThat(driver.decided.exhausted).containsExactly(1L);
    assertThat(store.secure).isNull();
    assertThat(driver.decided.secureMessages).isEmpty();
  }

  // Work per message.

  @Test
  void aRosterOfSixThousand_costsTheDeciderWorkPerMessage_notPerMessageTimesTheRoster() {
    // Made-up ids are free: a flood of keys fills the roster up to rounds.maxClients (1,000,000
    // by default). Each message must cost about its own size, not a copy or scan of the roster
    // (with those, phases 1 and 2 of 20,000 clients took 2.5 s of the decider, growing as n^2:
    // about two hours at 1,000,000).
    start();
    int n = 6_000;
    java.util.Random random = new java.util.Random(3);
    for (int i = 0; i < n; i++) {
      byte[] k = new byte[128];
      random.nextBytes(k);
      send(
          "c" + i,
          new AdvertiseKeys(
              ByteBuffer.wrap(k, 0, 32).slice(),
              ByteBuffer.wrap(k, 32, 32).slice(),
              ByteBuffer.wrap(k, 64, 32).slice(),
              ByteBuffer.wrap(k, 96, 32).slice()),
          10 + i / 100);
    }
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long before = threads.getCurrentThreadAllocatedBytes();
    driver.advanceTo(ADVERTISE_DEADLINE - 2);
    long advertising = threads.getCurrentThreadAllocatedBytes() - before;
    assertThat(store.secure.size()).isEqualTo(n);
    driver.advanceTo(ADVERTISE_DEADLINE - 1);

    Roster roster = only(Roster.class);
    int[] permutation = roster.getPermutation().stream().mapToInt(Integer::intValue).toArray();
    var graph = dev.privagg.secagg.HararyGraph.ofNeighbourhoodSize(roster.getDegree(), permutation);
    ByteBuffer ciphertext = ByteBuffer.wrap(new byte[ShareCipher.CIPHERTEXT_BYTES]);
    ByteBuffer commitments =
        ByteBuffer.wrap(new byte[ClientSession.commitmentBytes(roster.getThreshold())]);
    for (int i = 0; i < n; i++) {
      List<EncryptedShare> shares = new ArrayList<>();
      for (int v : graph.neighbourhood(i)) {
        if (v != i) {
          shares.add(new EncryptedShare(v, ciphertext.duplicate()));
        }
      }
      send("c" + i, new ShareKeys(shares, commitments.duplicate()), 300 + i / 200);
    }
    before = threads.getCurrentThreadAllocatedBytes();
    driver.advanceTo(SHARE_DEADLINE - 2);
    long sharing = threads.getCurrentThreadAllocatedBytes() - before;

    assertThat(decided.rejects).isEmpty();
    assertThat(Arrays.stream(store.secure.shareMessages).filter(m -> m == null)).isEmpty();
    // About 2 KB per advertisement and 700 bytes per share of a ShareKeys, their records decoded,
    // at any roster size; copying the roster at each join and the graph at each ShareKeys cost 38
    // and 120 KB at 6,000, and grew with the roster.
    assertThat(advertising)
        .as("bytes allocated to decide %d advertisements", n)
        .isLessThan(n * 8_000L);
    assertThat(sharing)
        .as("bytes allocated to decide %d ShareKeys of %d shares", n, roster.getDegree() - 1)
        .isLessThan(n * (roster.getDegree() - 1) * 1_200L);
  }

  // Review3: attacks on the receipt phase.

  /** Each client of {@code clients} opens its Shares message (phase 3 has opened). */
  private void openShares(List<Client> clients) {
    for (Client c : clients) {
      Shares inbox =
          published(1, Shares.class).stream()
              .filter(s -> s.getRecipient() == c.index)
              .findFirst()
              .orElseThrow();
      List<ClientSession.RoutedShare> routed = new ArrayList<>();
      for (RoutedShare r : inbox.getShares()) {
        routed.add(
            new ClientSession.RoutedShare(
                r.getSender(), bytes(r.getCiphertext()), commitmentsOf(r.getSender())));
      }
      c.session.onShares(routed);
    }
  }

  @Test
  void aClientWhoseReceiptRejectsTooMany_isNamedByItsClientId_atItsReceiptsPosition() {
    // 10 clients at these rates: k = 7, t = 2, r = 1. A receipt rejecting 3 honest neighbours
    // (more than r colluders and one client more) is a lie (TOO_MANY_REJECTIONS); the reject must
    // name the client as its other rejects do.
    List<Client> clients = sharedRound(10);
    assertThat(RoundThresholds.choose(10, THREAT).orElseThrow().rejectionLimit()).isEqualTo(1);
    driver.advanceTo(SHARE_DEADLINE - 1);
    openShares(clients);
    Client liar = clients.get(0);
    int[] victims =
        IntStream.of(
                dev.privagg.secagg.HararyGraph.ofNeighbourhoodSize(
                        store.secure.degree, store.secure.permutation)
                    .neighbourhood(liar.index))
            .filter(v -> v != liar.index)
            .limit(3)
            .toArray();
    long receiptOffset = offset;
    send(liar.id, new ShareReceipt(boxed(victims)), SHARE_DEADLINE);
    for (Client c : clients.subList(1, 10)) {
      send(c.id, new ShareReceipt(boxed(c.session.rejectedSenders())), SHARE_DEADLINE + c.index);
    }
    driver.advanceTo(CONFIRM_DEADLINE - 1);

    assertThat(only(Confirmed.class).getConfirmed()).doesNotContain(liar.index).hasSize(9);
    assertThat(decided.misbehaved)
        .singleElement()
        .asString()
        .startsWith(
            liar.id + " at " + liar.id + "@0/" + receiptOffset + ": its receipt rejected 3");
  }

  @Test
  void restoredMidRoundWithRatesThatGiveTheRosterNoGraph_doesNotFailTheJobAtConfirm() {
    // A careless operator restores a savepoint taken in phase 3 under a spec with other rates
    // (phases unchanged). confirm() asks RoundThresholds.choose(n, the new rates).orElseThrow()
    // for r, though the round's k and t are in its state: NoSuchElementException, every restore.
    List<Client> clients = sharedRound(6);
    driver.advanceTo(SHARE_DEADLINE - 1);
    assertThat(store.secure.phase).isEqualTo(SecureUpdate.CONFIRM);
    openShares(clients);
    for (Client c : clients) {
      send(c.id, new ShareReceipt(boxed(c.session.rejectedSenders())), SHARE_DEADLINE + c.index);
    }
    JobSpec changed =
        JobFixtures.spec(
            EXACT,
            "minimumCohort: {count: 20.36, noiseStd: 0.05}",
            "aggregation: {mode: secure, maxDropoutRate: 0.5, adversarialClientRate: 0.2,"
                + " adversary: curious-server, phases: {advertise: 250ms, share: 250ms,"
                + " confirm: 100ms, maskedInput: 150ms, consistency: 100ms}}");
    assertThat(RoundThresholds.choose(6, SecureUnmasking.threatModel(changed))).isEmpty();
    driver.start(changed, NoiseSources.forSpec(changed), LedgerFloor.NONE, 0);
    driver.lifecycle.keepAlive(store, driver.decided);

    driver.advanceTo(DEADLINE - 1); // must not throw

    assertThat(driver.decided.closed).hasSize(1);
  }

  // Restores under the other aggregation mode.

  @Test
  void restoredInPlaintextMode_aHeldMaskedInputIsRejected_andTheRoundIsReleasedWithNoiseAlone() {
    List<Client> clients = sharedRound(5);
    driver.advanceTo(SHARE_DEADLINE - 1);
    mask(clients, clients.subList(0, 2), 600);
    driver.advanceTo(650);
    // client-2's masked input is read, but event time has not reached its broker time: the
    // decider holds it (and its shard its values) when the savepoint is taken.
    sendMaskedInput(clients.get(2), 700);
    assertThat(store.held).containsKey(700L);

    JobSpec plain = JobFixtures.exactSpec("");
    driver.start(plain, NoiseSources.forSpec(plain), LedgerFloor.NONE, 0);
    driver.lifecycle.keepAlive(store, driver.decided); // as the first heartbeat re-arms timers
    driver.advanceTo(DEADLINE - 1);

    assertThat(driver.decided.rejectDetails)
        .singleElement()
        .asString()
        .startsWith("client-2 WRONG_AGGREGATION: ");
    assertThat(driver.decided.unmaskFailures)
        .singleElement()
        .asString()
        .contains("restored with aggregation.mode plaintext");
    assertThat(driver.decided.released).containsExactly(1L);
    assertThat(driver.decided.closed).extracting(ClosedRound::contributions).containsExactly(0L);
  }

  @Test
  void restoredInSecureMode_aHeldPlaintextUpdateIsRejected_andNeverReachesAShardAsAMaskedInput() {
    JobSpec plain = JobFixtures.exactSpec("");
    driver.start(plain, NoiseSources.forSpec(plain), LedgerFloor.NONE, 0);
    driver.read(JobFixtures.readFrom(0, 1, JobFixtures.update("a", 1, 0.5f, 0, 0)), 100);
    driver.advanceTo(100);
    assertThat(driver.decided.admitted).containsExactly("a");
    // Read, but held: event time is still before its broker time.
    driver.read(JobFixtures.readFrom(0, 2, JobFixtures.update("b", 1, 0.25f, 0, 0)), 200);

    driver.start(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE, 0);
    driver.lifecycle.keepAlive(store, driver.decided);
    driver.advanceTo(DEADLINE - 1);

    assertThat(driver.decided.rejectDetails)
        .singleElement()
        .asString()
        .startsWith("b WRONG_AGGREGATION: ");
    assertThat(driver.decided.admitted).isEmpty();
    // One plaintext update counted, under the secure spec's noisy minimum of 2.36: withheld.
    assertThat(driver.decided.withheld).containsExactly(1L);
    assertThat(driver.decided.closed).extracting(ClosedRound::contributions).containsExactly(1L);
  }
}
