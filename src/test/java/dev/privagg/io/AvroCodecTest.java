package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.RoundAnnouncement;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

class AvroCodecTest {
  @Test
  void modelWrittenWithTheEarlierSchema_stillDecodes_withoutAChargedNoiseMultiplier()
      throws Exception {
    Schema earlier = SchemaHistory.versions("GlobalModel").get(0);
    assertThat(SchemaNormalization.parsingFingerprint64(earlier))
        .isNotEqualTo(SchemaNormalization.parsingFingerprint64(GlobalModel.getClassSchema()));
    Schema tensorSchema = earlier.getField("tensors").schema().getElementType();
    GenericRecord tensor = new GenericData.Record(tensorSchema);
    tensor.put("name", "w");
    tensor.put("shape", List.of(2));
    tensor.put("data", ByteBuffer.wrap(new byte[] {0, 0, (byte) 0x80, 0x3F, 0, 0, 0, 0x40}));
    GenericRecord privacy = new GenericData.Record(earlier.getField("privacy").schema());
    privacy.put("epsilon", 1.5);
    privacy.put("delta", 1e-5);
    privacy.put("accountant", "rdp");
    privacy.put("noiseMultiplier", 1.1);
    privacy.put("clipNorm", 1.0);
    privacy.put("samplingRate", 0.2);
    privacy.put("samplingMode", "server-poisson");
    privacy.put("noiseSource", "secure");
    privacy.put("adjacency", "add-remove-one");
    privacy.put("budgetEpsilon", 4.0);
    GenericRecord model = new GenericData.Record(earlier);
    model.put("jobId", "j");
    model.put("round", 3L);
    model.put("tensors", List.of(tensor));
    model.put("privacy", privacy);
    ByteBuffer bytes =
        new BinaryMessageEncoder<GenericRecord>(GenericData.get(), earlier).encode(model);
    byte[] written = new byte[bytes.remaining()];
    bytes.get(written);

    GlobalModel read = AvroCodec.decodeModel(written);
    assertThat(read.getRound()).isEqualTo(3);
    assertThat(Tensors.flatten(read.getTensors())).containsExactly(1f, 2f);
    assertThat(read.getPrivacy().getEpsilon()).isEqualTo(1.5);
    assertThat(read.getPrivacy().getChargedNoiseMultiplier()).isNull();
  }

  @Test
  void rejectWrittenWithTheEarlierSchema_stillDecodes() throws Exception {
    Schema earlier = SchemaHistory.versions("RejectedUpdate").get(0);
    GenericRecord reject = new GenericData.Record(earlier);
    reject.put(
        "reason",
        new GenericData.EnumSymbol(earlier.getField("reason").schema(), "DUPLICATE_CLIENT"));
    reject.put("detail", "again");
    reject.put("sourceTopic", "updates");
    reject.put("sourcePartition", 1);
    reject.put("sourceOffset", 7L);
    ByteBuffer bytes =
        new BinaryMessageEncoder<GenericRecord>(GenericData.get(), earlier).encode(reject);
    byte[] written = new byte[bytes.remaining()];
    bytes.get(written);
    var read = AvroCodec.decodeReject(written);
    assertThat(read.getReason()).isEqualTo(dev.privagg.avro.RejectReason.DUPLICATE_CLIENT);
    assertThat(read.getSourceOffset()).isEqualTo(7);
  }

  @Test
  void ledgerEntryWrittenWithTheEarlierSchema_stillDecodes() throws Exception {
    Schema earlier = SchemaHistory.versions("LedgerEntry").get(0);
    GenericRecord entry = new GenericData.Record(earlier);
    entry.put("jobId", "j");
    entry.put("round", 4L);
    entry.put(
        "outcome", new GenericData.EnumSymbol(earlier.getField("outcome").schema(), "RELEASED"));
    entry.put("mechanismKind", "GAUSSIAN");
    entry.put("chargedNoiseMultiplier", 1.5);
    entry.put("adjacency", "add-remove-one");
    entry.put("samplingMode", "none");
    entry.put("samplingDeclared", false);
    entry.put("epsilonSpent", 2.0);
    entry.put("delta", 1e-5);
    entry.put("accountant", "rdp");
    entry.put("budgetEpsilon", 8.0);
    entry.put("contributions", 3L);
    entry.put("timestampMillis", 99L);
    ByteBuffer bytes =
        new BinaryMessageEncoder<GenericRecord>(GenericData.get(), earlier).encode(entry);
    byte[] written = new byte[bytes.remaining()];
    bytes.get(written);
    var read = AvroCodec.decodeLedgerEntry(written);
    assertThat(read.getOutcome()).isEqualTo(dev.privagg.avro.LedgerOutcome.RELEASED);
    assertThat(read.getRound()).isEqualTo(4);
    assertThat(read.getChargedNoiseMultiplier()).isEqualTo(1.5);
  }

  /**
   * Open rounds keep RoundAnnouncement v1's bytes, which clients of every version read and which an
   * upgraded job's re-announcement must repeat; only the budget-spent record needs v2.
   */
  @Test
  void openRounds_areWrittenWithV1_andOnlyTheBudgetSpentRecordWithV2() throws Exception {
    RoundAnnouncement open = new RoundAnnouncement("j", 4L, 3L, 12_345L, false);
    byte[] bytes = AvroCodec.encode(open);
    org.apache.avro.Schema v1 = SchemaHistory.versions("RoundAnnouncement").get(0);
    var v1Only =
        new org.apache.avro.message.BinaryMessageDecoder<org.apache.avro.generic.GenericRecord>(
            org.apache.avro.generic.GenericData.get(), v1);
    org.apache.avro.generic.GenericRecord read = v1Only.decode(bytes);
    assertThat(read.get("round")).isEqualTo(4L);
    assertThat(read.get("deadlineMillis")).isEqualTo(12_345L);
    assertThat(AvroCodec.decodeAnnouncement(bytes)).isEqualTo(open);
    assertThat(AvroCodec.isBudgetSpent(bytes)).isFalse();

    RoundAnnouncement spent = new RoundAnnouncement("j", 5L, 4L, 0L, true);
    byte[] spentBytes = AvroCodec.encode(spent);
    assertThat(AvroCodec.decodeAnnouncement(spentBytes)).isEqualTo(spent);
    assertThat(AvroCodec.isBudgetSpent(spentBytes)).isTrue();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> v1Only.decode(spentBytes))
        .as("a v1-only reader refuses it rather than reading an open round");
    assertThat(AvroCodec.isBudgetSpent(new byte[] {(byte) 0xC3, 1})).isFalse();
    assertThat(AvroCodec.isBudgetSpent(AvroCodec.encode(open))).isFalse();
  }
}
