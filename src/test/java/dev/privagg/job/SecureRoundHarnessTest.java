package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.ledger;
import static dev.privagg.job.JobFixtures.models;
import static dev.privagg.job.JobFixtures.rejects;
import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.AdvertiseKeys;
import dev.privagg.avro.Commitments;
import dev.privagg.avro.Confirmed;
import dev.privagg.avro.Consistency;
import dev.privagg.avro.EncryptedShare;
import dev.privagg.avro.LedgerOutcome;
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
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.secagg.AdvertisedKeys;
import dev.privagg.secagg.ClientSession;
import dev.privagg.secagg.Quantizer;
import dev.privagg.secagg.RoundContext;
import dev.privagg.spec.JobSpec;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A secure round through the three round operators in Flink's test harnesses: the decider's
 * messages reach the secure topic, its state ("secure-round", held SecureUpdates) survives a
 * checkpoint and a drain's savepoint mid-round, the unmask requests reach the combiner through the
 * unmask blocks and the seal waits for them, and the released model is the survivors' average.
 */
class SecureRoundHarnessTest {
  private static final String EXACT = "noiseMultiplier: 0\nbudgetEpsilon: .inf";
  private final JobSpec spec =
      JobFixtures.spec(
          EXACT,
          "minimumCohort: {count: 4.36, noiseStd: 0.05}",
          "aggregation: {mode: secure, maxDropoutRate: 0.3, adversarialClientRate: 0.1,"
              + " adversary: curious-server, phases: {advertise: 250ms, share: 250ms,"
              + " confirm: 100ms, maskedInput: 150ms, consistency: 100ms}}");
  private final SecureRandom random = seeded(9);
  private RoundsHarness harness;
  private final List<OutboundRecord> out = new ArrayList<>();
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

  private void start(RoundsHarness.Snapshot restoreFrom) throws Exception {
    harness = new RoundsHarness(List.of(spec), Map.<String, LedgerFloor>of());
    harness.setProcessingTime(0);
    if (restoreFrom != null) {
      harness.initializeState(restoreFrom);
    }
    harness.open();
  }

  @AfterEach
  void close() throws Exception {
    if (harness != null) {
      harness.close();
    }
  }

  private void advanceTo(long millis) throws Exception {
    harness.processBothWatermarks(new Watermark(millis));
    collect();
  }

  private void collect() {
    out.addAll(harness.extractOutputValues());
    harness.getOutput().clear();
  }

  private RoundsHarness.Snapshot restart(boolean drain) throws Exception {
    if (drain) {
      advanceTo(Long.MAX_VALUE);
    }
    RoundsHarness.Snapshot snapshot = harness.snapshot(1, 0);
    harness.close();
    start(snapshot);
    return snapshot;
  }

  private List<SecureRound> secureMessages() {
    return out.stream()
        .filter(r -> r.topic.equals(spec.topics().secure()))
        .map(r -> AvroCodec.decodeSecureRound(r.value))
        .toList();
  }

  private <T> T last(Class<T> type) {
    List<T> found =
        secureMessages().stream()
            .map(SecureRound::getBody)
            .filter(type::isInstance)
            .map(type::cast)
            .toList();
    assertThat(found).as(type.getSimpleName()).isNotEmpty();
    return found.get(found.size() - 1);
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  /** A client's message as the decode step makes it, appended at {@code at}. */
  private void send(String clientId, byte[] session, Object body, long at) throws Exception {
    byte[] record =
        AvroCodec.encode(new SecureMessage(JOB, 1L, ByteBuffer.wrap(session), clientId, body));
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
    harness.processElement1(
        new SecureUpdate(
            JOB,
            clientId,
            1,
            phase,
            session,
            values == null ? record : null,
            values,
            new RawUpdate("updates", 0, offset++, record)),
        at);
    collect();
  }

  private record Client(String id, ClientSession session, float[] values) {}

  /** Runs a five-client round, restarting the operators after {@code restartAfterPhase}. */
  private void fiveClientRound(int restartAfterPhase, boolean drain) throws Exception {
    fiveClientRound(restartAfterPhase, drain, 5);
  }

  /** As above, with only the first {@code unmasking} clients answering the Survivors message. */
  private void fiveClientRound(int restartAfterPhase, boolean drain, int unmasking)
      throws Exception {
    start(null);
    harness.processElement2(JOB, 0);
    collect();
    SecureRound opened = secureMessages().get(0);
    assertThat(opened.getBody()).isInstanceOf(Opened.class);
    byte[] session = bytes(opened.getSession());
    List<Client> clients = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      clients.add(
          new Client(
              "c" + i,
              ClientSession.start(
                  new RoundContext(JOB, 1, session),
                  "c" + i,
                  dev.privagg.secagg.RoundGraph.threatModel(0.3, 0.1, "curious-server"),
                  random),
              new float[] {(i + 1) / 8f, -0.25f, 1 / 16f}));
      AdvertisedKeys k = clients.get(i).session().advertise();
      send(
          "c" + i,
          session,
          new AdvertiseKeys(
              ByteBuffer.wrap(k.encryptionPublicKey()),
              ByteBuffer.wrap(k.maskPublicKey()),
              ByteBuffer.wrap(k.selfMaskCommitment()),
              ByteBuffer.wrap(k.signingPublicKey())),
          10 + i);
    }
    if (restartAfterPhase == 1) {
      restart(drain);
      if (drain) {
        // A heartbeat's keep-alive re-arms the timers the drain fired.
        harness.processElement1(DecodedUpdate.keepAlive(JOB), 20);
      }
    }
    advanceTo(249);

    Roster roster = last(Roster.class);
    List<AdvertisedKeys> entries = new ArrayList<>();
    for (RosterEntry e : roster.getEntries()) {
      entries.add(
          new AdvertisedKeys(
              bytes(e.getEncryptionPublicKey()),
              bytes(e.getMaskPublicKey()),
              bytes(e.getSelfMaskCommitment()),
              bytes(e.getSigningPublicKey())));
    }
    int[] permutation = roster.getPermutation().stream().mapToInt(Integer::intValue).toArray();
    for (Client c : clients) {
      List<EncryptedShare> shares = new ArrayList<>();
      for (ClientSession.EncryptedShare s :
          c.session().onRoster(entries, roster.getDegree(), roster.getThreshold(), permutation)) {
        shares.add(new EncryptedShare(s.recipient(), ByteBuffer.wrap(s.ciphertext())));
      }
      send(
          c.id(),
          session,
          new ShareKeys(shares, ByteBuffer.wrap(c.session().commitments())),
          300 + c.session().index());
    }
    if (restartAfterPhase == 2) {
      restart(drain);
      if (drain) {
        harness.processElement1(DecodedUpdate.keepAlive(JOB), 310);
      }
    }
    advanceTo(499);

    for (Client c : clients) {
      Shares inbox =
          secureMessages().stream()
              .map(SecureRound::getBody)
              .filter(b -> b instanceof Shares s && s.getRecipient() == c.session().index())
              .map(Shares.class::cast)
              .findFirst()
              .orElseThrow();
      List<ClientSession.RoutedShare> routed = new ArrayList<>();
      for (RoutedShare r : inbox.getShares()) {
        routed.add(
            new ClientSession.RoutedShare(
                r.getSender(),
                bytes(r.getCiphertext()),
                secureMessages().stream()
                    .map(SecureRound::getBody)
                    .filter(b -> b instanceof Commitments d && d.getSender() == r.getSender())
                    .map(b -> bytes(((Commitments) b).getCommitments()))
                    .findFirst()
                    .orElseThrow()));
      }
      assertThat(c.session().onShares(routed)).isEmpty();
      send(
          c.id(),
          session,
          new ShareReceipt(
              java.util.stream.IntStream.of(c.session().rejectedSenders()).boxed().toList()),
          500 + c.session().index());
    }
    if (restartAfterPhase == 3) {
      restart(drain);
      if (drain) {
        harness.processElement1(DecodedUpdate.keepAlive(JOB), 510);
      }
    }
    advanceTo(599);

    Confirmed confirmed = last(Confirmed.class);
    assertThat(confirmed.getConfirmed()).containsExactly(0, 1, 2, 3, 4);
    assertThat(confirmed.getCuts()).isEmpty();
    for (Client c : clients) {
      c.session().onConfirmed(new int[] {0, 1, 2, 3, 4}, new int[0][]);
      long[] units =
          new Quantizer(1.0)
              .quantize(new float[][] {{c.values()[0], c.values()[1]}, {c.values()[2]}}, random);
      send(
          c.id(),
          session,
          new MaskedInput(ByteBuffer.wrap(c.session().maskedInput(units))),
          600 + c.session().index());
    }
    if (restartAfterPhase == 4) {
      restart(drain);
      if (drain) {
        harness.processElement1(DecodedUpdate.keepAlive(JOB), 610);
      }
    }
    advanceTo(749);

    Survivors survivors = last(Survivors.class);
    int[] shared = survivors.getShared().stream().mapToInt(Integer::intValue).toArray();
    int[] masked = survivors.getMaskedInput().stream().mapToInt(Integer::intValue).toArray();
    assertThat(masked).containsExactly(0, 1, 2, 3, 4);
    for (Client c : clients) {
      byte[] signature = c.session().signSurvivors(shared, masked);
      send(
          c.id(),
          session,
          new SurvivorSignature(ByteBuffer.wrap(signature)),
          760 + c.session().index());
    }
    if (restartAfterPhase == 5) {
      restart(drain);
      if (drain) {
        harness.processElement1(DecodedUpdate.keepAlive(JOB), 770);
      }
    }
    advanceTo(849);

    Map<Integer, byte[]> signatures = new HashMap<>();
    for (SignedSurvivors s : last(Consistency.class).getSignatures()) {
      byte[] signature = new byte[s.getSignature().remaining()];
      s.getSignature().duplicate().get(signature);
      signatures.put(s.getIndex(), signature);
    }
    assertThat(signatures).containsOnlyKeys(0, 1, 2, 3, 4);
    for (Client c : clients.subList(0, unmasking)) {
      var reveal = c.session().unmask(signatures);
      send(
          c.id(),
          session,
          new UnmaskShares(revealed(reveal.selfMaskShares()), revealed(reveal.maskKeyShares())),
          900 + c.session().index());
    }
    advanceTo(999);
  }

  private static List<RevealedShare> revealed(
      List<dev.privagg.secagg.UnmaskShares.RevealedShare> shares) {
    List<RevealedShare> out = new ArrayList<>();
    for (dev.privagg.secagg.UnmaskShares.RevealedShare s : shares) {
      out.add(new RevealedShare(s.index(), ByteBuffer.wrap(s.share())));
    }
    return out;
  }

  private void assertReleasedTheAverageOfTheFive() {
    assertThat(rejects(out)).isEmpty();
    assertThat(ledger(out))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
              assertThat(e.getContributions()).isEqualTo(5);
            });
    // (1/8 + ... + 5/8, -1.25, 5/16) / m = 2, exactly: every value is on the grid.
    assertThat(models(out).stream().filter(m -> m.getRound() == 1).toList())
        .singleElement()
        .satisfies(m -> assertThat(weights(m)).containsExactly(0.9375f, -0.625f, 0.15625f));
    assertThat(secureMessages())
        .as("round 2 opened with a session of its own")
        .filteredOn(m -> m.getRound() == 2 && m.getBody() instanceof Opened)
        .singleElement()
        .satisfies(
            m ->
                assertThat(bytes(m.getSession()))
                    .isNotEqualTo(bytes(secureMessages().get(0).getSession())));
  }

  @Test
  void aSecureRound_throughTheOperators_releasesTheAverageOfItsClients() throws Exception {
    fiveClientRound(0, false);

    assertReleasedTheAverageOfTheFive();
    assertThat(secureMessages())
        .filteredOn(m -> m.getRound() == 1)
        .extracting(m -> m.getBody().getClass().getSimpleName())
        .containsExactly(
            "Opened",
            "Roster",
            "Commitments",
            "Commitments",
            "Commitments",
            "Commitments",
            "Commitments",
            "Shares",
            "Shares",
            "Shares",
            "Shares",
            "Shares",
            "Confirmed",
            "Survivors",
            "Consistency");
  }

  @Test
  void aCheckpointInEachPhase_restoresTheSecureRoundsStateAndItsHeldMessages() throws Exception {
    for (int phase = 1; phase <= 5; phase++) {
      out.clear();
      fiveClientRound(phase, false);

      assertReleasedTheAverageOfTheFive();
      harness.close();
      harness = null;
    }
  }

  @Test
  void aDrainsSavepointInEachPhase_thenAKeepAlive_finishesTheRound() throws Exception {
    for (int phase = 1; phase <= 5; phase++) {
      out.clear();
      fiveClientRound(phase, true);

      assertReleasedTheAverageOfTheFive();
      harness.close();
      harness = null;
    }
  }

  @Test
  void aRoundThatCannotBeUnmasked_isReleasedWithNoiseAlone_andItsShardsLetGoOfTheirSums()
      throws Exception {
    // Five clients on the complete graph need two answers to unmask: four stay silent.
    fiveClientRound(0, false, 1);

    assertThat(ledger(out))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
              assertThat(e.getContributions()).isZero();
            });
    assertThat(models(out).stream().filter(m -> m.getRound() == 1).toList())
        .singleElement()
        .satisfies(
            m -> {
              assertThat(weights(m)).containsExactly(0f, 0f, 0f);
              // What such rounds add to delta is stated with every secure release.
              var secure = m.getPrivacy().getSecureAggregation();
              assertThat(secure.getRounds()).isEqualTo(1);
              assertThat(secure.getFailureProbabilityPerRound())
                  .isEqualTo(spec.secureFailureProbabilityPerRound())
                  .isBetween(0x1p-40, 0x1p-39);
              assertThat(secure.getDelta()).isEqualTo(1.0); // epsilon is infinite: no noise
            });
    assertThat(harness.numSummingStateEntries())
        .as("the shards dropped round 1's sums; the combiner holds the model")
        .isEqualTo(1);
  }
}
