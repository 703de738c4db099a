package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.RejectReason;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.Test;

/**
 * The job's update decoder reads records written with an earlier ClientUpdate schema, with the same
 * caps and rejects as current ones. ClientUpdate has one released version so far, so the earlier
 * one here is made up as a plausible past: no metadata field, and a field the current schema
 * dropped ({@code sdk}).
 */
class EarlierUpdateVersionsTest {
  private static final Schema EARLIER =
      new Schema.Parser()
          .parse(
              """
              {"type": "record", "name": "ClientUpdate", "namespace": "dev.privagg.avro",
               "fields": [
                 {"name": "jobId", "type": "string"},
                 {"name": "round", "type": "long"},
                 {"name": "clientId", "type": "string"},
                 {"name": "sdk", "type": "string"},
                 {"name": "tensors", "type": {"type": "array", "items": {
                   "type": "record", "name": "Tensor", "fields": [
                     {"name": "name", "type": "string"},
                     {"name": "shape", "type": {"type": "array", "items": "int"}},
                     {"name": "data", "type": "bytes"}]}}}
               ]}
              """);
  private static final UpdateVersions VERSIONS =
      UpdateVersions.of(EARLIER, ClientUpdate.getClassSchema());
  private static final UpdateReader.Limits LIMITS = new UpdateReader.Limits(16, 4096, 1, 2, 8);

  private static byte[] earlierUpdate(String clientId) throws Exception {
    Schema tensorSchema = EARLIER.getField("tensors").schema().getElementType();
    GenericRecord tensor = new GenericData.Record(tensorSchema);
    tensor.put("name", "w");
    tensor.put("shape", List.of(2));
    tensor.put("data", ByteBuffer.wrap(new byte[] {0, 0, (byte) 0x80, 0x3F, 0, 0, 0, 0x40}));
    GenericRecord update = new GenericData.Record(EARLIER);
    update.put("jobId", "j");
    update.put("round", 5L);
    update.put("clientId", clientId);
    update.put("sdk", "python-0.1");
    update.put("tensors", List.of(tensor));
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(body, null);
    new GenericDatumWriter<GenericRecord>(EARLIER).write(update, encoder);
    encoder.flush();
    return record(EARLIER, body.toByteArray());
  }

  private static ClientUpdate read(byte[] bytes) throws UpdateReader.Rejected {
    return UpdateReader.read(
        bytes, job -> job.equals("j") ? LIMITS : null, VERSIONS, LIMITS.collectionItems());
  }

  @Test
  void updateOfAnEarlierSchema_decodesToTheCurrentRecord() throws Exception {
    ClientUpdate read = read(earlierUpdate("client-1"));

    assertThat(read.getJobId()).isEqualTo("j");
    assertThat(read.getRound()).isEqualTo(5);
    assertThat(read.getClientId()).isEqualTo("client-1");
    assertThat(read.getMetadata()).isNull();
    assertThat(read.getTensors()).hasSize(1);
    assertThat(read.getTensors().get(0).getShape()).containsExactly(2);
    assertThat(Tensors.flatten(read.getTensors())).containsExactly(1f, 2f);
  }

  @Test
  void earlierSchema_keepsTheJobsCaps() {
    assertThatThrownBy(() -> read(earlierUpdate("a-client-id-longer-than-16")))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            r -> assertThat(r.reason()).isEqualTo(RejectReason.CLIENT_ID_TOO_LONG));
  }

  @Test
  void earlierSchema_hugeDeclaredCountsAndBadUtf8_areUndecodable_beforeAvroAllocates() {
    // jobId "j", round 5, clientId "c", sdk "", then an array block declaring 2^40 tensors.
    byte[] huge =
        record(
            EARLIER,
            new byte[] {
              2,
              'j',
              10,
              2,
              'c',
              0,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              (byte) 0x80,
              0x40
            });
    assertThatThrownBy(() -> read(huge))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            r -> {
              assertThat(r.reason()).isEqualTo(RejectReason.UNDECODABLE);
              assertThat(r.getMessage()).contains("declares 1099511627776 items, more than the 0");
            });

    byte[] badUtf8 = record(EARLIER, new byte[] {2, 'j', 10, 2, (byte) 0xC0, 0, 0});
    assertThatThrownBy(() -> read(badUtf8))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            r -> assertThat(r.getMessage()).contains("clientId is not valid UTF-8"));

    byte[] trailing = record(EARLIER, new byte[] {2, 'j', 10, 2, 'c', 0, 0, 7});
    assertThatThrownBy(() -> read(trailing))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            r -> assertThat(r.getMessage()).contains("1 bytes follow the end of the record"));
  }

  @Test
  void unrecordedFingerprint_isUnknownSchema() throws Exception {
    byte[] bytes = earlierUpdate("c");

    assertThatThrownBy(() -> UpdateReader.read(bytes, job -> LIMITS))
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            r -> {
              assertThat(r.reason()).isEqualTo(RejectReason.UNKNOWN_SCHEMA);
              assertThat(r.getMessage()).contains("or an earlier version in schemas/history");
            });
  }

  @Test
  void recordedHistory_holdsTheCurrentSchemaAsItsLastVersion() {
    List<Schema> versions = SchemaHistory.versions("ClientUpdate");
    assertThat(SchemaNormalization.parsingFingerprint64(versions.get(versions.size() - 1)))
        .isEqualTo(SchemaNormalization.parsingFingerprint64(ClientUpdate.getClassSchema()));
    assertThat(SchemaHistory.byFingerprint("GlobalModel")).hasSize(6);
  }

  /** An earlier schema with a collection of zero-byte items, for hostile block counts. */
  private static final String TENSORS =
      """
      {"name": "tensors", "type": {"type": "array", "items": {
        "type": "record", "name": "Tensor", "fields": [
          {"name": "name", "type": "string"},
          {"name": "shape", "type": {"type": "array", "items": "int"}},
          {"name": "data", "type": "bytes"}]}}}
      """;

  private static final Schema PADDED =
      new Schema.Parser()
          .parse(
              """
              {"type": "record", "name": "ClientUpdate", "namespace": "dev.privagg.avro",
               "fields": [
                 {"name": "jobId", "type": "string"},
                 {"name": "round", "type": "long"},
                 {"name": "clientId", "type": "string"},
                 {"name": "pad", "type": {"type": "array", "items": "null"}},
              """
                  + TENSORS
                  + "]}");
  private static final UpdateVersions PADDED_VERSIONS =
      UpdateVersions.of(PADDED, ClientUpdate.getClassSchema());

  private static byte[] record(Schema schema, byte[] body) {
    return ByteBuffer.allocate(10 + body.length)
        .put((byte) 0xC3)
        .put((byte) 0x01)
        .order(ByteOrder.LITTLE_ENDIAN)
        .putLong(SchemaNormalization.parsingFingerprint64(schema))
        .put(body)
        .array();
  }

  private static void varint(ByteArrayOutputStream out, long v) {
    long z = (v << 1) ^ (v >> 63);
    while ((z & ~0x7FL) != 0) {
      out.write((int) ((z & 0x7F) | 0x80));
      z >>>= 7;
    }
    out.write((int) z);
  }

  private static long allocated(Runnable r) {
    com.sun.management.ThreadMXBean bean =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long before = bean.getCurrentThreadAllocatedBytes();
    r.run();
    return bean.getCurrentThreadAllocatedBytes() - before;
  }

  /**
   * 1 MB of empty tensors: the current reader refuses at the count; the earlier path refuses them
   * in the walk (more items than any job accepts), before Avro builds them.
   */
  @Test
  void manyEmptyTensors_earlierPathAllocatesLikeTheCurrentOne() {
    int n = 333_000;
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(new byte[] {2, 'j', 10, 2, 'c', 0}); // job, round, client, pad []
    varint(body, n);
    for (int i = 0; i < n; i++) {
      body.writeBytes(new byte[] {0, 0, 0});
    }
    body.write(0);
    byte[] earlier = record(PADDED, body.toByteArray());
    long cost =
        allocated(
            () ->
                assertThatThrownBy(
                        () ->
                            UpdateReader.read(
                                earlier, j -> LIMITS, PADDED_VERSIONS, LIMITS.collectionItems()))
                    .isInstanceOfSatisfying(
                        UpdateReader.Rejected.class,
                        r -> assertThat(r.reason()).isEqualTo(RejectReason.UNDECODABLE)));
    assertThat(cost)
        .as("bytes allocated for a %d-byte record", earlier.length)
        .isLessThan(10L * earlier.length);
  }

  /** Zero-byte items: every block may declare as many items as bytes remain. */
  @Test
  void nullItemBlocks_areBoundedByTheRecordSize() {
    int size = 60_000;
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(new byte[] {2, 'j', 10, 2, 'c'});
    // Blocks of null items, each declaring as many items as bytes remain after it.
    int tail = 2; // pad terminator, tensors terminator
    while (body.size() < size) {
      long remaining = size - body.size() - 3 + tail; // after a 3-byte count
      varint(body, remaining);
    }
    body.write(0);
    body.write(0);
    byte[] earlier = record(PADDED, body.toByteArray());
    // Without a budget over all blocks the walk visits every declared item (60 kB took 17 s).
    Throwable t = null;
    try {
      UpdateReader.read(earlier, j -> LIMITS, PADDED_VERSIONS, LIMITS.collectionItems());
    } catch (Throwable e) {
      t = e;
    }
    assertThat(t)
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            r -> {
              assertThat(r.reason()).isEqualTo(RejectReason.UNDECODABLE);
              assertThat(r.getMessage()).contains("declares more items in all");
            });
  }
}
