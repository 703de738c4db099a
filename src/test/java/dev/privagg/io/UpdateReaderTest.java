package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.Tensor;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class UpdateReaderTest {
  private static final String JOB = "job-a";
  private static final UpdateReader.Limits LIMITS = new UpdateReader.Limits(256, 4096, 1, 1, 1);
  private static final Function<String, UpdateReader.Limits> ONLY_JOB_A =
      job -> job.equals(JOB) ? LIMITS : null;

  static List<CraftedUpdates.Case> crafted() {
    return CraftedUpdates.all(JOB);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("crafted")
  void craftedRecord_isRejectedWithItsReason(CraftedUpdates.Case crafted) {
    assertThatThrownBy(() -> UpdateReader.read(crafted.bytes(), ONLY_JOB_A))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            e -> {
              assertThat(e.reason()).isEqualTo(crafted.reason());
              assertThat(e.getMessage()).isNotBlank();
            });
  }

  @Test
  void validRecord_readsAsAvroWritesIt_metadataCheckedAndDropped() throws Exception {
    ClientUpdate written = update("client-7", Map.of("os", "linux", "é", "ü"));
    ClientUpdate read = UpdateReader.read(AvroCodec.encode(written), ONLY_JOB_A);
    assertThat(read).isEqualTo(update("client-7", null));
    assertThat(read.getTensors().get(0).getData().isReadOnly()).isTrue();
  }

  @Test
  void blockWhoseDeclaredSizeDiffersFromItsItems_isUndecodable() {
    for (int declared : new int[] {17, 19}) {
      byte[] bytes = negativeTensorBlock(declared);
      assertThatThrownBy(() -> UpdateReader.read(bytes, ONLY_JOB_A))
          .as("declared %d, items take 18", declared)
          .isInstanceOfSatisfying(
              UpdateReader.Rejected.class,
              e -> assertThat(e.reason()).isEqualTo(RejectReason.UNDECODABLE));
    }
  }

  @Test
  void utf8_isCheckedStrictly() throws Exception {
    int[][] invalid = {
      {0xC0, 0xAF}, // overlong '/'
      {0xE0, 0x80, 0xAF}, // overlong
      {0xED, 0xA0, 0x80}, // surrogate U+D800
      {0xF4, 0x90, 0x80, 0x80}, // above U+10FFFF
      {0xE2, 0x82}, // cut short
      {0x80}, // continuation first
      {0xF8, 0x88, 0x80, 0x80, 0x80} // 5-byte form
    };
    for (int[] id : invalid) {
      byte[] bytes =
          AvroBytes.clientUpdateHeader()
              .string(JOB)
              .varint(1)
              .varint(id.length)
              .raw(id)
              .toByteArray();
      assertThatThrownBy(() -> UpdateReader.read(bytes, ONLY_JOB_A))
          .as(java.util.Arrays.toString(id))
          .isInstanceOfSatisfying(
              UpdateReader.Rejected.class,
              e -> assertThat(e.getMessage()).isEqualTo("clientId is not valid UTF-8"));
    }
    for (String id :
        new String[] {"\uFEFFbom", "\u0000", "\uFFFF", "\uD83D\uDE00", "é", "e\u0301"}) {
      assertThat(UpdateReader.read(AvroCodec.encode(update(id, null)), ONLY_JOB_A).getClientId())
          .isEqualTo(id);
    }
  }

  @Test
  void negativeBlockCounts_withBlockSizes_areValidAvro() throws Exception {
    // A blocking encoder writes -count and the block's byte size (Avro spec, arrays and maps).
    ClientUpdate written = update("c", Map.of("k", "v"));
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().blockingBinaryEncoder(body, null);
    new SpecificDatumWriter<>(ClientUpdate.class).write(written, encoder);
    encoder.flush();
    byte[] header = AvroBytes.clientUpdateHeader().toByteArray();
    byte[] bytes = new AvroBytes().raw(header).raw(body.toByteArray()).toByteArray();
    assertThat(UpdateReader.read(bytes, ONLY_JOB_A)).isEqualTo(update("c", null));
    assertThat(UpdateReader.read(negativeTensorBlock(18), ONLY_JOB_A).getTensors()).hasSize(1);
  }

  /** One tensor in a block of count -1 and the given byte size; its items take 18 bytes. */
  private static byte[] negativeTensorBlock(int declaredSize) {
    return AvroBytes.clientUpdateHeader()
        .string(JOB)
        .varint(1)
        .string("c")
        .varint(-1)
        .varint(declaredSize)
        .string("w") // 2 bytes
        .varint(1) // shape: 3 bytes
        .varint(3)
        .varint(0)
        .bytes(new byte[12]) // 13 bytes
        .varint(0)
        .varint(0)
        .toByteArray();
  }

  @Test
  void clientIdAtTheCap_isAccepted_oneByteMore_isRejected() throws Exception {
    UpdateReader.Limits tight = new UpdateReader.Limits(8, 0, 1, 1, 1);
    byte[] atCap = AvroCodec.encode(update("é1234567".substring(0, 7), null)); // 8 UTF-8 bytes
    assertThat(UpdateReader.read(atCap, job -> tight).getClientId()).isEqualTo("é123456");
    byte[] over = AvroCodec.encode(update("123456789", null));
    assertThatThrownBy(() -> UpdateReader.read(over, job -> tight))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            e -> {
              assertThat(e.reason()).isEqualTo(RejectReason.CLIENT_ID_TOO_LONG);
              assertThat(e.jobId()).isEqualTo(JOB);
              assertThat(e.round()).isEqualTo(1L);
              assertThat(e.clientId()).isNull();
              assertThat(e.getMessage()).contains("clientId is 9 bytes, the limit is 8");
            });
  }

  @Test
  void metadataCap_countsTheEncodedMap() throws Exception {
    // union index (1) + block count (1) + "k" (2) + 4-byte value (5) + end (1) = 10 bytes
    byte[] bytes = AvroCodec.encode(update("c", Map.of("k", "vvvv")));
    assertThat(UpdateReader.read(bytes, job -> new UpdateReader.Limits(8, 10, 1, 1, 1)))
        .isNotNull();
    assertThatThrownBy(
            () -> UpdateReader.read(bytes, job -> new UpdateReader.Limits(8, 9, 1, 1, 1)))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            e -> assertThat(e.reason()).isEqualTo(RejectReason.METADATA_TOO_LARGE));
  }

  @ParameterizedTest(name = "{0} entries per block")
  @org.junit.jupiter.params.provider.ValueSource(ints = {500_000, 1, -1})
  void aRecordCostsAboutItsOwnSize_evenAMegabyteOfTinyMetadataEntries(int perBlock)
      throws Exception {
    int entries = 250_000; // two empty strings each, in blocks of perBlock (negative: sized)
    AvroBytes record = withTensorUpTo().varint(1);
    if (perBlock > 1) {
      record.varint(entries);
      for (int i = 0; i < entries; i++) {
        record.varint(0).varint(0);
      }
    } else {
      for (int i = 0; i < entries; i++) {
        record = perBlock > 0 ? record.varint(1) : record.varint(-1).varint(2);
        record.varint(0).varint(0);
      }
    }
    byte[] bytes = record.varint(0).toByteArray();
    UpdateReader.Limits roomy = new UpdateReader.Limits(256, 1 << 20, 1, 1, 1);
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    for (int i = 0; i < 3; i++) {
      UpdateReader.read(bytes, job -> roomy); // warm up
    }
    long before = threads.getCurrentThreadAllocatedBytes();
    UpdateReader.read(bytes, job -> roomy);
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
    assertThat(allocated)
        .as("bytes allocated to read %d bytes", bytes.length)
        .isLessThan(bytes.length / 2);
  }

  @Test
  void unionIndexLongerThanAnAvroInt_isUndecodable_asAvroFindsIt() {
    byte[] bytes = withTensorUpTo().raw(0x82, 0x80, 0x80, 0x80, 0x80, 0x00).toByteArray();
    assertThatThrownBy(() -> UpdateReader.read(bytes, ONLY_JOB_A))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            e ->
                assertThat(e.getMessage())
                    .isEqualTo("metadata union index is not a valid Avro int"));
  }

  /** A valid update of job-a up to (not including) its metadata field. */
  private static AvroBytes withTensorUpTo() {
    return AvroBytes.clientUpdateHeader()
        .string(JOB)
        .varint(1)
        .string("c")
        .varint(1)
        .string("w")
        .varint(1)
        .varint(3)
        .varint(0)
        .bytes(new byte[12])
        .varint(0);
  }

  @Test
  void unknownJob_isNamed() {
    byte[] bytes = AvroCodec.encode(update("c", null));
    assertThatThrownBy(() -> UpdateReader.read(bytes, job -> null))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            e -> {
              assertThat(e.reason()).isEqualTo(RejectReason.UNKNOWN_JOB);
              assertThat(e.getMessage()).isEqualTo("no job 'job-a' runs here");
            });
  }

  @Test
  void everyTruncation_ofAValidRecord_isUndecodable() throws Exception {
    byte[] bytes = AvroCodec.encode(update("client-1", Map.of("k", "v")));
    for (int length = 0; length < bytes.length; length++) {
      byte[] cut = java.util.Arrays.copyOf(bytes, length);
      assertThatThrownBy(() -> UpdateReader.read(cut, ONLY_JOB_A))
          .as("cut at %d of %d", length, bytes.length)
          .isInstanceOfSatisfying(
              UpdateReader.Rejected.class,
              e -> assertThat(e.reason()).isIn(RejectReason.UNDECODABLE));
    }
  }

  private static ClientUpdate update(String clientId, Map<String, String> metadata) {
    Tensor w = new Tensor("w", List.of(3), ByteBuffer.wrap(new byte[12]));
    return new ClientUpdate(JOB, 1L, clientId, List.of(w), metadata);
  }
}
