package dev.privagg.job;

/** An encoded record for one of the output topics: topic, key (the job id) and Avro value. */
public class OutboundRecord {
  public String topic;
  public byte[] key;
  public byte[] value;

  public OutboundRecord() {}

  public OutboundRecord(String topic, byte[] key, byte[] value) {
    this.topic = topic;
    this.key = key;
    this.value = value;
  }
}
