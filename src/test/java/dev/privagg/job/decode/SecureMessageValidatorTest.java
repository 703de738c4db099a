package dev.privagg.job.decode;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.AdvertiseKeys;
import dev.privagg.avro.EncryptedShare;
import dev.privagg.avro.MaskedInput;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RevealedShare;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.ShareKeys;
import dev.privagg.avro.ShareReceipt;
import dev.privagg.avro.SurvivorSignature;
import dev.privagg.avro.UnmaskShares;
import dev.privagg.io.AvroBytes;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.CraftedUpdates;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.RawUpdate;
import dev.privagg.job.SecureUpdate;
import dev.privagg.secagg.AdvertisedKeys;
import dev.privagg.secagg.ClientSession;
import dev.privagg.secagg.RoundContext;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What decode checks of a SecureMessage without the round's state (docs/secure-aggregation.md,
 * Messages): the job it names aggregates securely, the client id fits, every field has its size and
 * no key has small order; anything else goes to the rejects topic with a reason and a detail that
 * names what was wrong, never as an exception. Genuine messages come from five {@link
 * ClientSession}s on the complete graph.
 */
class SecureMessageValidatorTest {
  private static final int CIPHERTEXT = dev.privagg.secagg.ShareCipher.CIPHERTEXT_BYTES;
  private static final String SECURE_JOB = "secure-job";
  private static final String PLAIN_JOB = "plain-job";
  private static final int D = 3;

  private static final JobSpec SECURE =
      JobSpecReader.parse(
          "secure",
          """
          jobId: %s
          model:
            tensors:
              - {name: w, shape: [%d]}
          rounds: {timeout: 1s, expectedClients: 2, minimumCohort: {count: 4.36, noiseStd: 0.05}}
          privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}
          maxClientIdBytes: 16
          maxMetadataBytes: 0
          maxRecordBytes: 2048
          aggregation: {mode: secure}
          """
              .formatted(SECURE_JOB, D));
  private static final JobSpec PLAIN =
      JobSpecReader.parse(
          "plain",
          """
          jobId: %s
          model:
            tensors:
              - {name: w, shape: [%d]}
          rounds: {timeout: 1s, expectedClients: 2}
          privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}
          """
              .formatted(PLAIN_JOB, D));

  private final UpdateValidator validator = new UpdateValidator(List.of(SECURE, PLAIN));

  // One genuine message of each phase, from client 0 of a five-client round.
  private static byte[] session;
  private static AdvertisedKeys advertised;
  private static List<ClientSession.EncryptedShare> shares;
  private static byte[] commitments;
  private static byte[] maskedInput;
  private static dev.privagg.secagg.UnmaskShares unmask;

  @BeforeAll
  static void aFiveClientRound() {
    SecureRandom random = seeded(11);
    session = new byte[16];
    random.nextBytes(session);
    RoundContext ctx = new RoundContext(SECURE_JOB, 1, session);
    List<ClientSession> clients = new ArrayList<>();
    List<AdvertisedKeys> roster = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      clients.add(
          ClientSession.start(
              ctx,
              "client-" + i,
              dev.privagg.secagg.RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server"),
              random));
      roster.add(clients.get(i).advertise());
    }
    List<List<ClientSession.EncryptedShare>> sent = new ArrayList<>();
    for (ClientSession client : clients) {
      sent.add(client.onRoster(roster, 5, 3, new int[] {0, 1, 2, 3, 4}));
    }
    int[] everyone = {0, 1, 2, 3, 4};
    java.util.Map<Integer, byte[]> signatures = new java.util.HashMap<>();
    for (int i = 0; i < 5; i++) {
      List<ClientSession.RoutedShare> in = new ArrayList<>();
      for (int sender = 0; sender < 5; sender++) {
        for (ClientSession.EncryptedShare s : sent.get(sender)) {
          if (s.recipient() == i) {
            in.add(
                new ClientSession.RoutedShare(
                    sender, s.ciphertext(), clients.get(sender).commitments()));
          }
        }
      }
      assertThat(clients.get(i).onShares(in)).isEmpty();
      clients.get(i).onConfirmed(everyone, new int[0][]);
      byte[] masked = clients.get(i).maskedInput(new long[] {1, -2, 3});
      if (i == 0) {
        maskedInput = masked;
      }
      signatures.put(i, clients.get(i).signSurvivors(everyone, everyone));
    }
    advertised = roster.get(0);
    commitments = clients.get(0).commitments();
    shares = sent.get(0);
    unmask = clients.get(0).unmask(signatures);
  }

  private static SecureRandom seeded(long seed) {
    try {
      SecureRandom random = SecureRandom.getInstance("SHA1PRNG");
      random.setSeed(seed);
      return random;
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  // Messages: genuine bodies, and ways to spoil one field.

  private static AdvertiseKeys advertiseKeys() {
    return new AdvertiseKeys(
        ByteBuffer.wrap(advertised.encryptionPublicKey()),
        ByteBuffer.wrap(advertised.maskPublicKey()),
        ByteBuffer.wrap(advertised.selfMaskCommitment()),
        ByteBuffer.wrap(advertised.signingPublicKey()));
  }

  private static ShareKeys shareKeys() {
    List<EncryptedShare> out = new ArrayList<>();
    for (ClientSession.EncryptedShare s : shares) {
      out.add(new EncryptedShare(s.recipient(), ByteBuffer.wrap(s.ciphertext())));
    }
    return new ShareKeys(out, ByteBuffer.wrap(commitments));
  }

  private static UnmaskShares unmaskShares() {
    return new UnmaskShares(revealed(unmask.selfMaskShares()), revealed(unmask.maskKeyShares()));
  }

  private static List<RevealedShare> revealed(
      List<dev.privagg.secagg.UnmaskShares.RevealedShare> shares) {
    List<RevealedShare> out = new ArrayList<>();
    for (dev.privagg.secagg.UnmaskShares.RevealedShare s : shares) {
      out.add(new RevealedShare(s.index(), ByteBuffer.wrap(s.share())));
    }
    return out;
  }

  private static byte[] message(String jobId, byte[] session, String clientId, Object body) {
    return AvroCodec.encode(new SecureMessage(jobId, 1L, ByteBuffer.wrap(session), clientId, body));
  }

  private static byte[] message(Object body) {
    return message(SECURE_JOB, session, "client-0", body);
  }

  private static RawUpdate raw(byte[] value) {
    return new RawUpdate("updates", 3, 77, value);
  }

  private UpdateValidator.Result validate(byte[] value) {
    return validator.validate(raw(value));
  }

  private UpdateValidator.Rejection rejected(byte[] value) {
    UpdateValidator.Result result = validate(value);
    assertThat(result.update()).as("accepted, though it should be rejected").isNull();
    return result.rejection();
  }

  private static byte[] bytes(int length, int fill) {
    byte[] b = new byte[length];
    Arrays.fill(b, (byte) fill);
    return b;
  }

  // The job and the aggregation mode.

  @Test
  void secureMessageToAPlaintextJob_isWrongAggregation_namingTheJobAndWhatToSend() {
    UpdateValidator.Rejection r =
        rejected(message(PLAIN_JOB, session, "client-0", advertiseKeys()));

    assertThat(r.reason()).isEqualTo(RejectReason.WRONG_AGGREGATION);
    assertThat(r.detail())
        .contains("job 'plain-job' aggregates in plaintext")
        .contains("send ClientUpdate records");
    assertThat(r.jobId()).isEqualTo(PLAIN_JOB);
    assertThat(r.clientId()).isEqualTo("client-0");
    assertThat(r.round()).isEqualTo(1L);
  }

  @Test
  void clientUpdateToASecureJob_isWrongAggregation_pointingToTheSecureProtocol() {
    UpdateValidator.Rejection r =
        rejected(CraftedUpdates.valid(SECURE_JOB, "client-0", 0.1f, 0.2f, 0.3f));

    assertThat(r.reason()).isEqualTo(RejectReason.WRONG_AGGREGATION);
    assertThat(r.detail())
        .contains("job 'secure-job' aggregates securely")
        .contains("never a plain ClientUpdate");
    assertThat(r.jobId()).isEqualTo(SECURE_JOB);
  }

  @Test
  void plainClientUpdateToThePlaintextJob_isStillAccepted_besideASecureJob() {
    UpdateValidator.Result result =
        validate(CraftedUpdates.valid(PLAIN_JOB, "client-0", 0.1f, 0.2f, 0.3f));

    assertThat(result.rejection()).isNull();
    assertThat(result.update()).isNotInstanceOf(SecureUpdate.class);
  }

  @Test
  void secureMessageForAnUnknownJob_isUnknownJob_listingTheJobsThatRunHere() {
    UpdateValidator.Rejection r = rejected(message("no-such-job", session, "c", advertiseKeys()));

    assertThat(r.reason()).isEqualTo(RejectReason.UNKNOWN_JOB);
    assertThat(r.detail())
        .contains("no job 'no-such-job' runs here")
        .contains(SECURE_JOB)
        .contains(PLAIN_JOB);
  }

  @Test
  void aRejectOfAnUnknownJobOrTheWrongMode_neverCopiesIdsBeyondTheLimits_soItFitsTheRejectsTopic() {
    // A record of the roomiest job's size whose job id and client id take half of it each: the
    // reject carries the record and must fit what the sink and the rejects topic take (the record
    // plus 1 MiB); copying both ids (and the job id again as the key) would need 2.5 times it,
    // fail the sink, and replay the record forever.
    int half = (int) (PLAIN.maxRecordBytes() / 2) - 200;
    byte[] unknownJob = message("j".repeat(half), session, "c".repeat(half), advertiseKeys());
    byte[] plainJob = message(PLAIN_JOB, session, "c".repeat(2 * half), advertiseKeys());
    for (byte[] value : List.of(unknownJob, plainJob)) {
      assertThat((long) value.length).isLessThanOrEqualTo(PLAIN.maxRecordBytes());
      UpdateValidator.Rejection r = rejected(value);
      assertThat(r.reason()).isIn(RejectReason.UNKNOWN_JOB, RejectReason.WRONG_AGGREGATION);

      dev.privagg.job.OutboundRecord reject =
          dev.privagg.job.Records.reject(
              "rejects",
              r.reason(),
              r.detail(),
              r.jobId(),
              r.clientId(),
              r.round(),
              "updates",
              0,
              0,
              value);
      long size = reject.value.length + (reject.key == null ? 0 : reject.key.length);
      assertThat(size)
          .as("bytes of the %s reject of a %d-byte record", r.reason(), value.length)
          .isLessThanOrEqualTo(
              PLAIN.maxRecordBytes() + dev.privagg.job.kafka.KafkaPreflight.OUTPUT_HEADROOM_BYTES);
    }
  }

  @Test
  void secureMessageLargerThanItsJobsRecordLimit_isRecordTooLarge_thoughAnotherJobTakesThatSize() {
    // 40 well-formed 92-byte ciphertexts: 3,680 bytes, within the plaintext job's 1 MiB but over
    // the secure job's 2,048.
    List<EncryptedShare> many = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      many.add(new EncryptedShare(i, ByteBuffer.wrap(bytes(CIPHERTEXT, i))));
    }
    byte[] value = message(new ShareKeys(many, ByteBuffer.allocate(0)));
    assertThat(value.length).isGreaterThan(2048).isLessThan((int) PLAIN.maxRecordBytes());

    UpdateValidator.Rejection r = rejected(value);

    assertThat(r.reason()).isEqualTo(RejectReason.RECORD_TOO_LARGE);
    assertThat(r.detail()).contains(value.length + " bytes exceeds the job's limit of 2048");
    assertThat(r.clientId()).isEqualTo("client-0");
    // An id over the job's limit is refused as such first: the reject never copies it.
    UpdateValidator.Rejection longId =
        rejected(
            message(
                SECURE_JOB,
                session,
                "c".repeat(1000),
                new ShareKeys(many, ByteBuffer.allocate(0))));
    assertThat(longId.reason()).isEqualTo(RejectReason.CLIENT_ID_TOO_LONG);
    assertThat(longId.clientId()).isEmpty();
  }

  // Sizes of the fields.

  @Test
  void clientIdOverTheJobsLimit_isClientIdTooLong_andTheRejectDoesNotCopyTheId() {
    String longId = "c".repeat(17);
    UpdateValidator.Rejection r = rejected(message(SECURE_JOB, session, longId, advertiseKeys()));

    assertThat(r.reason()).isEqualTo(RejectReason.CLIENT_ID_TOO_LONG);
    assertThat(r.detail()).isEqualTo("client id exceeds 16 UTF-8 bytes");
    assertThat(r.clientId()).isEmpty();
    // The limit counts UTF-8 bytes, not characters: eight two-byte characters fit, nine do not.
    assertThat(validate(message(SECURE_JOB, session, "é".repeat(8), advertiseKeys())).update())
        .isNotNull();
    assertThat(rejected(message(SECURE_JOB, session, "é".repeat(9), advertiseKeys())).reason())
        .isEqualTo(RejectReason.CLIENT_ID_TOO_LONG);
  }

  @Test
  void sessionOfOtherThan16Bytes_isASecureProtocolReject_sayingHowManyItHad() {
    for (int length : new int[] {0, 15, 17, 32}) {
      UpdateValidator.Rejection r =
          rejected(message(SECURE_JOB, bytes(length, 1), "client-0", advertiseKeys()));

      assertThat(r.reason()).as("%d bytes", length).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail()).isEqualTo("session has " + length + " bytes, expected 16");
    }
  }

  @Test
  void advertisedKeysOrCommitmentOfOtherThan32Bytes_areRefused() {
    List<UnaryOperator<AdvertiseKeys>> spoilers =
        List.of(
            a -> withEncryptionKey(a, bytes(31, 9)),
            a -> withEncryptionKey(a, bytes(33, 9)),
            a -> withMaskKey(a, bytes(31, 9)),
            a -> withMaskKey(a, new byte[0]),
            a ->
                new AdvertiseKeys(
                    a.getEncryptionPublicKey(),
                    a.getMaskPublicKey(),
                    ByteBuffer.wrap(bytes(33, 1)),
                    a.getSigningPublicKey()),
            a ->
                new AdvertiseKeys(
                    a.getEncryptionPublicKey(),
                    a.getMaskPublicKey(),
                    ByteBuffer.wrap(bytes(31, 1)),
                    a.getSigningPublicKey()));
    for (UnaryOperator<AdvertiseKeys> spoil : spoilers) {
      UpdateValidator.Rejection r = rejected(message(spoil.apply(advertiseKeys())));

      assertThat(r.reason()).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail()).isEqualTo("public keys and commitment must have 32 bytes each");
    }
  }

  @Test
  void advertisedKeysWithoutASigningKey_asAClientOfBeforeTheConsistencyRoundSends_areRefused() {
    AdvertiseKeys a = advertiseKeys();
    for (byte[] key : new byte[][] {new byte[0], bytes(31, 2), bytes(33, 2)}) {
      UpdateValidator.Rejection r =
          rejected(
              message(
                  new AdvertiseKeys(
                      a.getEncryptionPublicKey(),
                      a.getMaskPublicKey(),
                      a.getSelfMaskCommitment(),
                      ByteBuffer.wrap(key))));

      assertThat(r.reason()).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail())
          .isEqualTo(
              "signingPublicKey must have 32 bytes (Ed25519), had "
                  + key.length
                  + "; a client from before the consistency round (SecureMessage v2) cannot take"
                  + " part: upgrade it");
    }
  }

  @Test
  void aSurvivorSignatureOfOtherThan64Bytes_isRefused() {
    for (int length : new int[] {0, 63, 65}) {
      UpdateValidator.Rejection r =
          rejected(message(new SurvivorSignature(ByteBuffer.wrap(bytes(length, 3)))));

      assertThat(r.reason()).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail())
          .isEqualTo("a survivor signature must have 64 bytes (Ed25519), had " + length);
    }
  }

  /**
   * The points of small order on Curve25519 (RFC 7748 Section 6.1; the list libsodium blocks), in
   * canonical and non-canonical encodings and with the ignored top bit set.
   */
  static final List<String> SMALL_ORDER_POINTS =
      List.of(
          "0000000000000000000000000000000000000000000000000000000000000000", // 0
          "0100000000000000000000000000000000000000000000000000000000000000", // 1
          "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800", // order 8
          "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157", // order 8
          "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p - 1
          "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p = 0
          "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p + 1 = 1
          "0000000000000000000000000000000000000000000000000000000000000080", // 0, top bit
          "0100000000000000000000000000000000000000000000000000000000000080"); // 1, top bit

  @Test
  void anEncryptionKeyOfSmallOrder_isRefused() {
    for (String hex : SMALL_ORDER_POINTS) {
      byte[] point = HexFormat.of().parseHex(hex);
      UpdateValidator.Rejection r = rejected(message(withEncryptionKey(advertiseKeys(), point)));

      assertThat(r.reason()).as(hex).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail())
          .isEqualTo(
              "encryptionPublicKey has small order (RFC 7748 section 6.1); send a fresh X25519"
                  + " key");
    }
  }

  /**
   * Mask keys and self-mask commitments are what shares are checked against: the identity, points
   * of small order (libsodium's blocklist on edwards25519; a small-order part: Edwards25519Test),
   * bytes on no point, and an X25519 key of a client from before (most are no valid point) are
   * refused.
   */
  @Test
  void aMaskKeyOrCommitmentOutsideThePrimeOrderSubgroup_isRefused() {
    byte[] order8 =
        HexFormat.of().parseHex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a");
    byte[] noPoint = new byte[32];
    noPoint[0] = 2;
    byte[] identity = dev.privagg.secagg.Edwards25519.IDENTITY.encode();
    for (byte[] point : List.of(order8, noPoint, identity)) {
      for (String field : List.of("maskPublicKey", "selfMaskCommitment")) {
        AdvertiseKeys keys =
            field.equals("maskPublicKey")
                ? withMaskKey(advertiseKeys(), point)
                : withCommitment(advertiseKeys(), point);
        UpdateValidator.Rejection r = rejected(message(keys));

        assertThat(r.reason()).as(field).isEqualTo(RejectReason.SECURE_PROTOCOL);
        assertThat(r.detail()).startsWith(field + " is not a point of edwards25519's prime-order");
      }
    }
  }

  private static AdvertiseKeys withCommitment(AdvertiseKeys a, byte[] commitment) {
    return new AdvertiseKeys(
        a.getEncryptionPublicKey(),
        a.getMaskPublicKey(),
        ByteBuffer.wrap(commitment),
        a.getSigningPublicKey());
  }

  private static AdvertiseKeys withEncryptionKey(AdvertiseKeys a, byte[] key) {
    return new AdvertiseKeys(
        ByteBuffer.wrap(key),
        a.getMaskPublicKey(),
        a.getSelfMaskCommitment(),
        a.getSigningPublicKey());
  }

  private static AdvertiseKeys withMaskKey(AdvertiseKeys a, byte[] key) {
    return new AdvertiseKeys(
        a.getEncryptionPublicKey(),
        ByteBuffer.wrap(key),
        a.getSelfMaskCommitment(),
        a.getSigningPublicKey());
  }

  @Test
  void anEncryptedShareOfOtherThan92BytesOrWithANegativeIndex_isRefused_namingBoth() {
    record Spoiled(int index, int bytes) {}
    for (Spoiled s :
        List.of(
            new Spoiled(1, CIPHERTEXT - 1),
            new Spoiled(1, CIPHERTEXT + 1),
            new Spoiled(1, 0),
            new Spoiled(-1, CIPHERTEXT))) {
      List<EncryptedShare> list = new ArrayList<>(shareKeys().getShares());
      list.set(1, new EncryptedShare(s.index(), ByteBuffer.wrap(bytes(s.bytes(), 5))));

      UpdateValidator.Rejection r =
          rejected(message(new ShareKeys(list, shareKeys().getCommitments())));

      assertThat(r.reason()).as("%s", s).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail())
          .isEqualTo(
              "each encrypted share needs an index >= 0 and 92 bytes of ciphertext, was index "
                  + s.index()
                  + " with "
                  + s.bytes()
                  + " bytes");
    }
  }

  @Test
  void aRevealedShareOfOtherThan32BytesOrWithANegativeIndex_isRefused_inEitherList() {
    record Spoiled(int index, int bytes, boolean selfMask) {}
    for (Spoiled s :
        List.of(
            new Spoiled(0, 31, true),
            new Spoiled(0, 33, true),
            new Spoiled(-2, 32, true),
            new Spoiled(1, 31, false),
            new Spoiled(-1, 32, false))) {
      List<RevealedShare> selfMask = new ArrayList<>(unmaskShares().getSelfMaskShares());
      List<RevealedShare> maskKey = new ArrayList<>(unmaskShares().getMaskKeyShares());
      RevealedShare bad = new RevealedShare(s.index(), ByteBuffer.wrap(bytes(s.bytes(), 3)));
      if (s.selfMask()) {
        selfMask.set(0, bad);
      } else {
        maskKey.add(bad);
      }

      UpdateValidator.Rejection r = rejected(message(new UnmaskShares(selfMask, maskKey)));

      assertThat(r.reason()).as("%s", s).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail())
          .isEqualTo(
              "each revealed share needs an index >= 0 and 32 bytes, was index "
                  + s.index()
                  + " with "
                  + s.bytes()
                  + " bytes");
    }
  }

  @Test
  void aMaskedInputOfOtherThan8BytesPerCoordinate_isRefused_sayingWhatItExpected() {
    for (int length : new int[] {0, 8 * D - 1, 8 * D + 1, 4 * D, 16 * D}) {
      UpdateValidator.Rejection r =
          rejected(message(new MaskedInput(ByteBuffer.wrap(bytes(length, 7)))));

      assertThat(r.reason()).as("%d bytes", length).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail())
          .isEqualTo(
              "masked input has "
                  + length
                  + " bytes, expected "
                  + 8 * D
                  + " ("
                  + D
                  + " words of 64 bits)");
    }
  }

  @Test
  void aReceiptWhoseIndicesAreNotAscendingOrNegative_isRefused_andAnAscendingOneIsTaken() {
    for (List<Integer> rejected : List.of(List.of(2, 1), List.of(1, 1), List.of(-1))) {
      UpdateValidator.Rejection r = rejected(message(new ShareReceipt(rejected)));

      assertThat(r.reason()).as("%s", rejected).isEqualTo(RejectReason.SECURE_PROTOCOL);
      assertThat(r.detail()).startsWith("a receipt's rejected indices must be ascending and >= 0");
    }
    UpdateValidator.Result taken = validate(message(new ShareReceipt(List.of(0, 2))));
    assertThat(taken.rejection()).isNull();
    assertThat(((SecureUpdate) taken.update()).phase).isEqualTo(SecureUpdate.CONFIRM);
  }

  // Bytes that are not one SecureMessage.

  /** SecureMessage bodies written field by field, declaring what no encoder would. */
  private static List<CraftedUpdates.Case> crafted() {
    List<CraftedUpdates.Case> cases = new ArrayList<>();
    add(cases, "header only", AvroBytes.secureMessageHeader());
    add(cases, "2^30-byte job id", AvroBytes.secureMessageHeader().varint(1L << 30));
    add(cases, "negative job id length", AvroBytes.secureMessageHeader().varint(-3));
    add(
        cases,
        "round as an 11-byte varint",
        AvroBytes.secureMessageHeader()
            .string(SECURE_JOB)
            .raw(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01));
    add(cases, "2^30-byte session", upToSession().varint(1L << 30));
    add(cases, "Long.MIN_VALUE session length", upToSession().varint(Long.MIN_VALUE));
    add(cases, "2^30-byte client id", upToSession().bytes(session).varint(1L << 30));
    add(
        cases,
        "client id that is not UTF-8",
        upToSession().bytes(session).varint(2).raw(0xC3, 0x28).varint(2));
    add(cases, "body union index 4", upToBody().varint(4));
    add(cases, "body union index -1", upToBody().varint(-1));
    add(cases, "2^31-byte encryption key", upToBody().varint(0).varint(1L << 31));
    add(cases, "2^30 encrypted shares", upToBody().varint(1).varint(1L << 30));
    add(
        cases,
        "negative share block count with a 2^40-byte block size",
        upToBody().varint(1).varint(-1).varint(1L << 40));
    add(cases, "2^31-byte ciphertext", upToBody().varint(1).varint(1).varint(0).varint(1L << 31));
    add(cases, "2^40-byte masked input", upToBody().varint(2).varint(1L << 40));
    add(cases, "2^30 revealed shares", upToBody().varint(3).varint(1L << 30));
    add(
        cases,
        "2^30-byte revealed share",
        upToBody().varint(3).varint(1).varint(0).varint(1L << 30));
    add(
        cases,
        "masked input followed by more bytes",
        upToBody().varint(2).bytes(new byte[8 * D]).raw(0, 0));
    add(cases, "masked input cut short", upToBody().varint(2).varint(8 * D).raw(new byte[5]));
    return cases;
  }

  private static AvroBytes upToSession() {
    return AvroBytes.secureMessageHeader().string(SECURE_JOB).varint(1);
  }

  private static AvroBytes upToBody() {
    return upToSession().bytes(session).string("client-0");
  }

  private static void add(List<CraftedUpdates.Case> cases, String name, AvroBytes bytes) {
    cases.add(new CraftedUpdates.Case(name, bytes.toByteArray(), RejectReason.UNDECODABLE));
  }

  @Test
  void craftedBodiesWithHugeDeclaredLengths_areUndecodable_withoutAllocatingWhatTheyDeclare() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    for (CraftedUpdates.Case c : crafted()) {
      validate(c.bytes()); // warm up
      long before = threads.getCurrentThreadAllocatedBytes();
      UpdateValidator.Result result = validate(c.bytes());
      long allocated = threads.getCurrentThreadAllocatedBytes() - before;

      assertThat(result.update()).as(c.name()).isNull();
      assertThat(result.rejection().reason()).as(c.name()).isEqualTo(c.reason());
      assertThat(result.rejection().detail()).as(c.name()).startsWith("SecureMessage: ");
      assertThat(allocated).as("bytes allocated to reject %s", c.name()).isLessThan(1L << 20);
    }
  }

  @Test
  void
      aRecordOfTheJobsLimitFullOfEmptyShares_isRejected_allocatingAboutItsSizeNotAnObjectPerByte() {
    // A model of 2^17 coordinates: masked inputs of 1 MiB, and maxRecordBytes of 2 MiB by default.
    JobSpec large =
        JobSpecReader.parse(
            "large",
            """
            jobId: %s
            model:
              tensors:
                - {name: w, shape: [131072]}
            rounds: {timeout: 1s, expectedClients: 2, minimumCohort: {count: 4.36, noiseStd: 0.05}}
            privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}
            aggregation: {mode: secure}
            """
                .formatted(SECURE_JOB));
    UpdateValidator v = new UpdateValidator(List.of(large));
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    // Each item two bytes (index 0, an empty share): about a million of them, each of which
    // Avro's reader would make an object, a ByteBuffer and an array of.
    long items = (large.maxRecordBytes() - 64) / 2;
    for (int kind : new int[] {1, 3}) {
      AvroBytes record = upToBody().varint(kind).varint(items);
      byte[] empty = new byte[2 * (int) items];
      record.raw(empty).varint(0);
      if (kind == 3) {
        record.varint(0); // no mask-key shares
      }
      byte[] value = record.toByteArray();
      assertThat((long) value.length).isLessThanOrEqualTo(large.maxRecordBytes());
      v.validate(raw(value)); // warm up
      long before = threads.getCurrentThreadAllocatedBytes();
      UpdateValidator.Result result = v.validate(raw(value));
      long allocated = threads.getCurrentThreadAllocatedBytes() - before;

      assertThat(result.update()).isNull();
      assertThat(allocated)
          .as("bytes allocated to reject a %d-byte record of %d empty items", value.length, items)
          .isLessThan(4L * value.length);
    }
  }

  @Test
  void everyTruncationOfAGenuineMessage_isUndecodable_neverAnException() {
    for (byte[] genuine :
        List.of(
            message(advertiseKeys()),
            message(shareKeys()),
            message(new MaskedInput(ByteBuffer.wrap(maskedInput))),
            message(unmaskShares()))) {
      assertThat(validate(genuine).update()).isNotNull();
      // From 10 bytes on the header names the SecureMessage schema.
      for (int length = 10; length < genuine.length; length++) {
        UpdateValidator.Result result = validate(Arrays.copyOf(genuine, length));

        assertThat(result.update()).as("%d of %d bytes", length, genuine.length).isNull();
        assertThat(result.rejection().reason())
            .as("%d of %d bytes", length, genuine.length)
            .isEqualTo(RejectReason.UNDECODABLE);
      }
    }
  }

  @Test
  void garbageAfterTheHeader_isRejectedOrAccepted_butNeverThrows() {
    SplittableRandom random = new SplittableRandom(0x5EC);
    byte[] header = AvroBytes.secureMessageHeader().toByteArray();
    byte[] genuine = message(shareKeys());
    for (int i = 0; i < 5_000; i++) {
      byte[] value;
      if (i % 2 == 0) {
        value = Arrays.copyOf(header, header.length + random.nextInt(300));
        for (int j = header.length; j < value.length; j++) {
          value[j] = (byte) random.nextInt(256);
        }
      } else {
        // A genuine message with a few bytes after the header overwritten.
        value = genuine.clone();
        for (int k = 0; k < 1 + random.nextInt(4); k++) {
          value[header.length + random.nextInt(value.length - header.length)] =
              (byte) random.nextInt(256);
        }
      }
      UpdateValidator.Result result = validate(value);

      assertThat((result.update() == null) != (result.rejection() == null))
          .as("exactly one of update and rejection, input %d", i)
          .isTrue();
      if (result.update() instanceof SecureUpdate s) {
        assertThat(s.session).hasSize(16);
        assertThat(s.jobId).isEqualTo(SECURE_JOB);
      }
    }
  }

  // Genuine messages.

  @Test
  void validMessageOfEachPhase_isASecureUpdate_withItsPhaseSessionAndMessageOrMaskedInput() {
    Object[] bodies = {
      advertiseKeys(),
      shareKeys(),
      new ShareReceipt(List.of(2)),
      new MaskedInput(ByteBuffer.wrap(maskedInput)),
      new SurvivorSignature(ByteBuffer.wrap(new byte[64])),
      unmaskShares()
    };
    for (int phase = 1; phase <= 6; phase++) {
      byte[] value = message(bodies[phase - 1]);

      UpdateValidator.Result result = validate(value);

      assertThat(result.rejection()).as("phase %d", phase).isNull();
      DecodedUpdate update = result.update();
      assertThat(update).isInstanceOf(SecureUpdate.class);
      SecureUpdate s = (SecureUpdate) update;
      assertThat(s.phase).isEqualTo(phase);
      assertThat(s.session).isEqualTo(session);
      assertThat(s.jobId).isEqualTo(SECURE_JOB);
      assertThat(s.clientId).isEqualTo("client-0");
      assertThat(s.round).isEqualTo(1L);
      assertThat(s.sourceTopic).isEqualTo("updates");
      assertThat(s.sourcePartition).isEqualTo(3);
      assertThat(s.sourceOffset).isEqualTo(77L);
      if (phase == SecureUpdate.MASKED_INPUT) {
        assertThat(s.message).as("a masked input travels as values, not as a message").isNull();
        assertThat(s.tensorData).hasDimensions(1, 8 * D);
        assertThat(s.tensorData[0]).isEqualTo(maskedInput);
        assertThat(s.carriesValues()).isTrue();
        assertThat(s.valueBytes()).isEqualTo(8L * D);
      } else {
        assertThat(s.message).isEqualTo(value);
        assertThat(AvroCodec.decodeSecureMessage(s.message).getBody()).isEqualTo(bodies[phase - 1]);
        assertThat(s.tensorData).isNull();
        assertThat(s.carriesValues()).isFalse();
      }
    }
  }

  @Test
  void withoutValues_keepsPhaseSessionAndMessage_andTheMaskedInputsSize() {
    SecureUpdate masked =
        (SecureUpdate) validate(message(new MaskedInput(ByteBuffer.wrap(maskedInput)))).update();
    SecureUpdate advertise = (SecureUpdate) validate(message(advertiseKeys())).update();

    DecodedUpdate light = masked.withoutValues();
    DecodedUpdate keys = advertise.withoutValues();

    assertThat(light).isInstanceOf(SecureUpdate.class);
    assertThat(light.tensorData).isNull();
    assertThat(light.valueBytes()).isEqualTo(8L * D);
    assertThat(light.carriesValues()).isTrue();
    assertThat(((SecureUpdate) light).phase).isEqualTo(SecureUpdate.MASKED_INPUT);
    assertThat(((SecureUpdate) light).session).isEqualTo(session);
    assertThat(keys).isInstanceOf(SecureUpdate.class);
    assertThat(((SecureUpdate) keys).message).isEqualTo(advertise.message);
    assertThat(keys.carriesValues()).isFalse();
  }
}
