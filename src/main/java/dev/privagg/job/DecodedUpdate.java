package dev.privagg.job;

import dev.privagg.io.Float32;
import dev.privagg.job.decode.ClientKeys;
import dev.privagg.job.shard.ShardPlan;
import java.nio.ByteBuffer;

/**
 * A decoded, shape-checked client update: tensors in the job spec's order, all values finite.
 * Carries its source position so later rejects can point back to the original record.
 *
 * <p>Values travel as each tensor's float32 little-endian bytes, as they arrived: Flink copies a
 * byte array between operators in one bulk write, but a float array one value at a time, which
 * dominated the shuffle of million-parameter updates.
 */
public class DecodedUpdate {
  public String jobId;
  public String clientId;
  public long round;
  public byte[][] tensorData;
  public String sourceTopic;
  public int sourcePartition;
  public long sourceOffset;

  /** Routing key of the shard that sums this update's values (see {@link ShardPlan}). */
  public String shardKey;

  /** The client id's fixed-size key ({@link ClientKeys}), computed once, in parallel, at decode. */
  public String clientKey;

  /**
   * The L2 norm of the values, for a job with adaptive clipping (whose decider counts the updates C
   * leaves unclipped without seeing values); null otherwise.
   */
  public Double norm;

  /** Bytes of the values, kept when the values themselves are left behind. */
  public long valueBytes;

  /**
   * No update: a heartbeat's keep-alive for the job, so the aggregator can re-arm the open round's
   * deadline timer when no client sends (after a restore from a drained savepoint, say).
   */
  public boolean keepAlive;

  public DecodedUpdate() {}

  /** A keep-alive for {@code jobId}. */
  public static DecodedUpdate keepAlive(String jobId) {
    DecodedUpdate update = new DecodedUpdate();
    update.jobId = jobId;
    update.keepAlive = true;
    return update;
  }

  public DecodedUpdate(
      String jobId, String clientId, long round, byte[][] tensorData, RawUpdate source) {
    this.jobId = jobId;
    this.clientId = clientId;
    this.round = round;
    this.tensorData = tensorData;
    this.sourceTopic = source.topic;
    this.sourcePartition = source.partition;
    this.sourceOffset = source.offset;
  }

  /**
   * This update without its values, for the round decider, which needs only who sent what where:
   * the values go to the update's shard.
   */
  public DecodedUpdate withoutValues() {
    DecodedUpdate copy = new DecodedUpdate();
    copyIdentity(copy);
    return copy;
  }

  /** Copies everything but the values into {@code copy}. */
  protected final void copyIdentity(DecodedUpdate copy) {
    copy.jobId = jobId;
    copy.clientId = clientId;
    copy.round = round;
    copy.sourceTopic = sourceTopic;
    copy.sourcePartition = sourcePartition;
    copy.sourceOffset = sourceOffset;
    copy.shardKey = shardKey;
    copy.clientKey = clientKey;
    copy.keepAlive = keepAlive;
    copy.norm = norm;
    copy.valueBytes = valueBytes();
  }

  /**
   * Whether this record's values go to its shard: every update's do; of secure aggregation's
   * messages only a masked input's.
   */
  public boolean carriesValues() {
    return true;
  }

  /** Bytes of the values this update carries or carried. */
  public long valueBytes() {
    if (tensorData == null) {
      return valueBytes;
    }
    long bytes = 0;
    for (byte[] tensor : tensorData) {
      bytes += tensor.length;
    }
    return bytes;
  }

  /** The update's place in the updates log. */
  public String position() {
    return position(sourcePartition, sourceOffset);
  }

  public static String position(int partition, long offset) {
    return partition + "/" + offset;
  }

  /** Copies tensor bytes into {@code out}, one array per tensor, each of its tensor's size. */
  public static void readValues(byte[][] tensorData, float[][] out) {
    for (int t = 0; t < out.length; t++) {
      Float32.read(ByteBuffer.wrap(tensorData[t]), out[t], 0, out[t].length);
    }
  }
}
