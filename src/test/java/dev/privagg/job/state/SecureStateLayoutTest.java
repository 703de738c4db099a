package dev.privagg.job.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.RawUpdate;
import dev.privagg.job.SecureRoundState;
import dev.privagg.job.SecureUpdate;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * Secure aggregation's state: a held or waiting {@link SecureUpdate} keeps its class and its phase,
 * session and message through {@link DecodedUpdateLayout} version 2 (and Flink's copy), a plain
 * update stays plain, version 1 still reads; a secure round's state keeps the messages of the
 * clients that sent them and the gaps of those that did not.
 */
class SecureStateLayoutTest {
  private static final Path STORED = Path.of("src/test/resources/state-layouts");

  private static <T> byte[] bytes(StateLayout<T> layout, T value) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    layout.write(value, out);
    return out.getCopyOfBuffer();
  }

  private static <T> T read(StateLayout<T> layout, int version, byte[] bytes) throws IOException {
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    T value = layout.read(version, in);
    assertThat(in.available()).as("bytes left").isZero();
    return value;
  }

  private static SecureUpdate secureUpdate(int phase) {
    byte[] session = new byte[16];
    for (int i = 0; i < 16; i++) {
      session[i] = (byte) (0xA0 + i);
    }
    byte[][] values =
        phase == SecureUpdate.MASKED_INPUT ? new byte[][] {{1, 2, 3, 4, 5, 6, 7, 8}} : null;
    byte[] message = phase == SecureUpdate.MASKED_INPUT ? null : new byte[] {(byte) 0xC3, 1, 9, 9};
    SecureUpdate u =
        new SecureUpdate(
            "job-a",
            "client-7",
            3,
            phase,
            session,
            message,
            values,
            new RawUpdate("updates", 2, 41, null));
    u.clientKey = "key-7";
    u.shardKey = "job-a#0.1";
    return u;
  }

  @Test
  void aSecureUpdateOfEachPhase_survivesARoundTrip_asASecureUpdate() throws Exception {
    for (int phase = SecureUpdate.ADVERTISE; phase <= SecureUpdate.UNMASK; phase++) {
      SecureUpdate update = secureUpdate(phase);

      DecodedUpdate back =
          read(DecodedUpdateLayout.INSTANCE, 4, bytes(DecodedUpdateLayout.INSTANCE, update));

      assertThat(back).as("phase %d", phase).isExactlyInstanceOf(SecureUpdate.class);
      assertThat(back).usingRecursiveComparison().isEqualTo(update);
      assertThat(back.carriesValues()).isEqualTo(phase == SecureUpdate.MASKED_INPUT);
    }
  }

  @Test
  void aMaskedInputHeldWithoutItsValues_keepsItsSizeAndPhase() throws Exception {
    DecodedUpdate light = secureUpdate(SecureUpdate.MASKED_INPUT).withoutValues();

    DecodedUpdate back =
        read(DecodedUpdateLayout.INSTANCE, 3, bytes(DecodedUpdateLayout.INSTANCE, light));

    assertThat(back).isExactlyInstanceOf(SecureUpdate.class);
    assertThat(((SecureUpdate) back).phase).isEqualTo(SecureUpdate.MASKED_INPUT);
    assertThat(back.tensorData).isNull();
    assertThat(back.valueBytes()).isEqualTo(8);
    assertThat(back.carriesValues()).isTrue();
  }

  @Test
  void aPlainUpdate_staysAPlainUpdate() throws Exception {
    DecodedUpdate plain =
        new DecodedUpdate(
            "job-a", "client-1", 2, new byte[][] {{1, 2, 3, 4}}, new RawUpdate("u", 0, 5, null));
    plain.norm = 0.5;

    DecodedUpdate back =
        read(DecodedUpdateLayout.INSTANCE, 3, bytes(DecodedUpdateLayout.INSTANCE, plain));

    assertThat(back).isExactlyInstanceOf(DecodedUpdate.class);
    assertThat(back).usingRecursiveComparison().isEqualTo(plain);
  }

  @Test
  void version1Bytes_stillReadAsAPlainUpdate_andWriteAgainAsVersion2() throws Exception {
    byte[] v1 = Files.readAllBytes(STORED.resolve("decoded-update-v1.bin"));

    DecodedUpdate back = read(DecodedUpdateLayout.INSTANCE, 1, v1);

    assertThat(back).isExactlyInstanceOf(DecodedUpdate.class);
    assertThat(back.jobId).isNotNull();
    byte[] v2 = bytes(DecodedUpdateLayout.INSTANCE, back);
    assertThat(v2).hasSize(v1.length + 1).startsWith(v1); // one more byte: "not secure"
    assertThat(v2[v1.length]).isZero();
    assertThat(read(DecodedUpdateLayout.INSTANCE, 2, v2))
        .usingRecursiveComparison()
        .isEqualTo(back);
  }

  @Test
  void theVersion3BytesOfASecureUpdate_arePinned() throws Exception {
    // The secure part after the common fields: flag 1, phase, session, message (null: -1).
    byte[] written = bytes(DecodedUpdateLayout.INSTANCE, secureUpdate(SecureUpdate.MASKED_INPUT));
    byte[] common =
        bytes(DecodedUpdateLayout.INSTANCE, copyCommon(secureUpdate(SecureUpdate.MASKED_INPUT)));

    assertThat(HexFormat.of().formatHex(written, common.length - 1, written.length))
        .isEqualTo("01" + "00000004" + "00000010a0a1a2a3a4a5a6a7a8a9aaabacadaeaf" + "ffffffff");
  }

  @Test
  void aHeldMessageOfVersion2_keepsItsPhase_thoughTheReceiptAndConsistencyPhasesNowComeBefore()
      throws Exception {
    // Version 2 knew four phases: its 3 (masked input) and 4 (unmask) are 4 and 6 now.
    int[][] oldToNew = {
      {1, SecureUpdate.ADVERTISE},
      {2, SecureUpdate.SHARE},
      {3, SecureUpdate.MASKED_INPUT},
      {4, SecureUpdate.UNMASK}
    };
    for (int[] step : oldToNew) {
      SecureUpdate update = secureUpdate(step[1]);
      update.phase = step[0];
      byte[] v2 = bytes(DecodedUpdateLayout.INSTANCE, update);

      SecureUpdate back = (SecureUpdate) read(DecodedUpdateLayout.INSTANCE, 2, v2);

      assertThat(back.phase).as("version-2 phase %d", step[0]).isEqualTo(step[1]);
    }
  }

  @Test
  void aHeldMessageOfVersion3_keepsItsPhase_thoughTheConsistencyPhaseNowComesBeforeUnmasking()
      throws Exception {
    // Version 3 knew five phases: its 5 (unmask) is 6 now, the others are as they were.
    for (int old = 1; old <= 5; old++) {
      SecureUpdate update = secureUpdate(old == 5 ? SecureUpdate.UNMASK : old);
      update.phase = old;
      byte[] v3 = bytes(DecodedUpdateLayout.INSTANCE, update);

      SecureUpdate back = (SecureUpdate) read(DecodedUpdateLayout.INSTANCE, 3, v3);

      assertThat(back.phase)
          .as("version-3 phase %d", old)
          .isEqualTo(old == 5 ? SecureUpdate.UNMASK : old);
    }
  }

  private static DecodedUpdate copyCommon(SecureUpdate u) {
    DecodedUpdate d =
        new DecodedUpdate(
            u.jobId, u.clientId, u.round, u.tensorData, new RawUpdate("updates", 2, 41, null));
    d.clientKey = u.clientKey;
    d.shardKey = u.shardKey;
    return d;
  }

  @Test
  void flinksCopyOfHeldState_keepsTheSecureUpdate() {
    SecureUpdate update = secureUpdate(SecureUpdate.SHARE);

    DecodedUpdate copy = StateSerializers.DECODED_UPDATE.copy(update);

    assertThat(copy).isExactlyInstanceOf(SecureUpdate.class).isNotSameAs(update);
    assertThat(copy).usingRecursiveComparison().isEqualTo(update);
  }

  @Test
  void aSecureRoundsState_keepsWhoSentWhat_withGapsForThoseWhoDidNot() throws Exception {
    SecureRoundState s = new SecureRoundState();
    s.round = 4;
    s.session = new byte[16];
    s.advertiseDeadlineMillis = 250;
    s.shareDeadlineMillis = 500;
    s.confirmDeadlineMillis = 600;
    s.maskedInputDeadlineMillis = 750;
    s.unmaskDeadlineMillis = 1000;
    s.clipNorm = 1.5;
    s.phase = SecureUpdate.UNMASK;
    s.clientKeys = new String[] {"k0", "k1", "k2"};
    s.shardKeys = new String[] {"s0", "s1", "s0"};
    s.advertised = new byte[][] {new byte[128], new byte[128], new byte[128]};
    s.degree = 3;
    s.threshold = 2;
    s.rejectionLimit = 1;
    s.permutation = new int[] {2, 0, 1};
    s.shareMessages = new byte[][] {{1}, null, {3, 3}};
    s.receipts = new int[][] {{2}, null, {}};
    s.confirmed = new boolean[] {true, false, true};
    s.cuts = new int[][] {{0, 2}};
    s.messagePartitions = new int[] {0, 1, -1, 0, 0, 0, 2, 2, 2};
    s.messageOffsets = new long[] {10, 11, -1, 0, 0, 0, 30, 31, 32};
    s.maskedInput = new boolean[] {true, false, true};
    s.unmaskMessages = new byte[][] {null, null, {7}};
    s.consistencyDeadlineMillis = 900;
    s.signatureThreshold = 2;
    s.statement = new byte[32];
    s.signatures = new byte[][] {new byte[64], null, new byte[64]};

    SecureRoundState back =
        read(SecureRoundLayout.INSTANCE, 5, bytes(SecureRoundLayout.INSTANCE, s));

    assertThat(back).usingRecursiveComparison().isEqualTo(s);
    assertThat(back.shareMessages[1]).isNull();
    assertThat(back.receipts[1]).isNull();
    assertThat(back.indexOf("k2")).isEqualTo(2);
  }

  /**
   * A round stored by a version before verifiable secret sharing (layouts v1 to v3) holds
   * SecureMessage v3 bytes and X25519 keys: it is read flagged, so that the decider finishes it
   * without a sum instead of decoding what it cannot (SecurePhasesTest covers the decider).
   */
  @Test
  void roundsOfLayoutsBeforeVersion4_areFlaggedAsBeforeVerifiableSecretSharing() throws Exception {
    for (int version = 1; version <= 3; version++) {
      byte[] stored =
          Files.readAllBytes(
              Path.of("src/test/resources/state-layouts/secure-round-v" + version + ".bin"));
      assertThat(read(SecureRoundLayout.INSTANCE, version, stored).beforeVerifiableSecretSharing)
          .as("layout v%d", version)
          .isTrue();
    }
    SecureRoundState fresh = new SecureRoundState();
    fresh.session = new byte[16];
    assertThat(
            read(SecureRoundLayout.INSTANCE, 5, bytes(SecureRoundLayout.INSTANCE, fresh))
                .beforeVerifiableSecretSharing)
        .isFalse();
  }

  /**
   * A round stored before distributed noise (layout v4) masked 64-bit words over the model's
   * dimension with no plan: a spec of distributed noise restored over it ends it without a sum.
   */
  @Test
  void roundsOfLayoutVersion4_masked64BitWordsWithoutAPlan() throws Exception {
    SecureRoundState v4 =
        read(
            SecureRoundLayout.INSTANCE,
            4,
            Files.readAllBytes(STORED.resolve("secure-round-v4.bin")));
    assertThat(v4.maskedWordBits).isEqualTo(64);
    assertThat(v4.maskedDimension).isEqualTo(-1);
    assertThat(v4.distributedPlan).isEmpty();
    assertThat(v4.masksLike(64, 36, "")).isTrue();
    assertThat(v4.masksLike(18, 64, "a plan")).isFalse();
  }

  @Test
  void aVersion1Round_hasNoReceipts_everyClientThatSharedIsConfirmedOnceItsPhaseIsPast()
      throws Exception {
    byte[] v1 = Files.readAllBytes(Path.of("src/test/resources/state-layouts/secure-round-v1.bin"));

    SecureRoundState back = read(SecureRoundLayout.INSTANCE, 1, v1);

    assertThat(back.confirmDeadlineMillis).isEqualTo(back.shareDeadlineMillis);
    assertThat(back.phase).isNotEqualTo(SecureUpdate.CONFIRM);
    assertThat(java.util.Arrays.asList(back.receipts))
        .hasSize(back.shareMessages.length)
        .containsOnlyNulls();
    assertThat(back.cuts).isEmpty();
    assertThat(back.messagePartitions).hasSize(3 * back.size()).containsOnly(-1);
    for (int i = 0; i < back.confirmed.length; i++) {
      assertThat(back.confirmed[i])
          .isEqualTo(back.phase > SecureUpdate.CONFIRM && back.shareMessages[i] != null);
    }
  }

  @Test
  void aVersion2Round_runsOnWithoutTheConsistencyRound_itsUnmaskPhaseMovedToSix() throws Exception {
    byte[] v2 = Files.readAllBytes(Path.of("src/test/resources/state-layouts/secure-round-v2.bin"));
    SecureRoundState asStored = readV2Phase(v2);

    SecureRoundState back = read(SecureRoundLayout.INSTANCE, 2, v2);

    assertThat(back.consistencyDeadlineMillis).isEqualTo(back.maskedInputDeadlineMillis);
    assertThat(back.signatureThreshold).isZero();
    assertThat(back.phase).isEqualTo(asStored.phase >= 5 ? asStored.phase + 1 : asStored.phase);
    assertThat(java.util.Arrays.asList(back.signatures))
        .hasSize(back.shareMessages.length)
        .containsOnlyNulls();
  }

  /** The phase as version 2 stored it: after round, session and six deadline fields. */
  private static SecureRoundState readV2Phase(byte[] v2) throws Exception {
    var in = new org.apache.flink.core.memory.DataInputDeserializer(v2);
    SecureRoundState s = new SecureRoundState();
    s.round = in.readLong();
    in.skipBytesToRead(in.readInt()); // session
    for (int i = 0; i < 5; i++) {
      in.readLong();
    }
    in.readDouble();
    s.phase = in.readInt();
    return s;
  }
}
