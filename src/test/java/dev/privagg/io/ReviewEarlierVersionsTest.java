package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.RejectReason;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.junit.jupiter.api.Test;

/** Review: what the earlier-version path costs on hostile records. */
class ReviewEarlierVersionsTest {
  private static final String TENSORS =
      """
      {"name": "tensors", "type": {"type": "array", "items": {
        "type": "record", "name": "Tensor", "fields": [
          {"name": "name", "type": "string"},
          {"name": "shape", "type": {"type": "array", "items": "int"}},
          {"name": "data", "type": "bytes"}]}}}
      """;
  private static final Schema EARLIER =
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
  private static final UpdateVersions VERSIONS =
      UpdateVersions.of(EARLIER, ClientUpdate.getClassSchema());
  private static final UpdateReader.Limits LIMITS = new UpdateReader.Limits(16, 4096, 1, 2, 8);

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
    byte[] earlier = record(EARLIER, body.toByteArray());
    long cost =
        allocated(
            () ->
                assertThatThrownBy(
                        () ->
                            UpdateReader.read(
                                earlier, j -> LIMITS, VERSIONS, LIMITS.collectionItems()))
                    .isInstanceOfSatisfying(
                        UpdateReader.Rejected.class,
                        r -> assertThat(r.reason()).isEqualTo(RejectReason.UNDECODABLE)));
    System.out.println(
        "earlier path allocated " + cost + " bytes for a " + earlier.length + " byte record");
    assertThat(cost).isLessThan(10L * earlier.length);
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
    byte[] earlier = record(EARLIER, body.toByteArray());
    long start = System.nanoTime();
    Throwable t = null;
    try {
      UpdateReader.read(earlier, j -> LIMITS, VERSIONS, LIMITS.collectionItems());
    } catch (Throwable e) {
      t = e;
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    System.out.println("null-item blocks: " + earlier.length + " bytes took " + ms + " ms: " + t);
    assertThat(ms).isLessThan(1000);
    assertThat(t)
        .isInstanceOfSatisfying(
            UpdateReader.Rejected.class,
            r -> assertThat(r.reason()).isEqualTo(RejectReason.UNDECODABLE));
  }
}
