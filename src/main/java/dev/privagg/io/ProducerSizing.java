package dev.privagg.io;

import java.util.Map;

/**
 * Producer settings for records of a given size. A Kafka producer refuses any record larger than
 * its {@code buffer.memory} (32 MiB by default) as well as its {@code max.request.size}, so both
 * grow with the model: an 8M-parameter float32 record is 32 MiB plus headers.
 */
public final class ProducerSizing {
  private static final long DEFAULT_BUFFER_MEMORY = 32L << 20;

  private ProducerSizing() {}

  /**
   * {@code max.request.size} and {@code buffer.memory} for records up to {@code maxRecordBytes}.
   */
  public static Map<String, String> forRecordsUpTo(long maxRecordBytes) {
    if (!(maxRecordBytes > 0 && maxRecordBytes <= Integer.MAX_VALUE)) {
      throw new IllegalArgumentException(
          "maxRecordBytes must be in [1, " + Integer.MAX_VALUE + "], was " + maxRecordBytes);
    }
    // Room for two records in flight, so a send need not wait for the previous one's ack.
    long buffer = Math.max(DEFAULT_BUFFER_MEMORY, 2 * maxRecordBytes);
    return Map.of(
        "max.request.size", Long.toString(maxRecordBytes), "buffer.memory", Long.toString(buffer));
  }
}
