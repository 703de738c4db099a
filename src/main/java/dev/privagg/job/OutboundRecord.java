package dev.privagg.job;

import dev.privagg.job.ledger.Deployment;

/**
 * An encoded record for one of the output topics: topic, key (the job id) and Avro value. For a
 * release (a model or a round announcement) the topic is the public topic it is meant for; the sink
 * writes it to the internal releases topic, from which only committed copies are published.
 */
public class OutboundRecord {
  public String topic;
  public byte[] key;
  public byte[] value;

  /** The round a release is for; -1 for records that are not releases. */
  public long round = -1;

  /** When an announced round opened (internal only); -1 for other records. */
  public long openedMillis = -1;

  /** A release's deployment nonce (internal only, see {@link Deployment}); null for others. */
  public String deployment;

  /**
   * An announcement whose window follows the fixed schedule (internal only, see {@link
   * JobProgress#fixedSchedule}): false under {@code rounds.nextRoundAtEarlyClose}.
   */
  public boolean fixedSchedule;

  public OutboundRecord() {}

  public OutboundRecord(String topic, byte[] key, byte[] value) {
    this.topic = topic;
    this.key = key;
    this.value = value;
  }

  /** A release for round {@code round}. */
  static OutboundRecord release(String topic, byte[] key, byte[] value, long round) {
    OutboundRecord record = new OutboundRecord(topic, key, value);
    record.round = round;
    return record;
  }
}
