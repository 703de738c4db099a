package dev.privagg.job;

/** A record as read from the updates topic: where it came from and its value bytes. */
public class RawUpdate {
  public String topic;
  public int partition;
  public long offset;
  public byte[] value;

  /** A heartbeat tick, not a client record: it only advances event time. */
  public boolean tick;

  /**
   * The record's time was set by its producer (CreateTime), not by the broker: it must neither move
   * event time nor join a round, or one client could close rounds at will.
   */
  public boolean producerTime;

  public RawUpdate() {}

  public RawUpdate(String topic, int partition, long offset, byte[] value) {
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.value = value;
  }
}
