package dev.privagg.job;

/**
 * What the round decider tells one shard, in decision order: an update (by its place in the updates
 * log) joins round {@code round}'s sum or is dropped, round {@code round} is sealed once the shard
 * has summed {@code expected} updates of it, or discarded (the budget ran out, or a restored job
 * took over from the ledger topic).
 */
public class ShardCommand {
  /** The three commands. */
  public enum Kind {
    ADMIT,
    DROP,
    SEAL,
    DISCARD
  }

  public Kind kind;
  public String jobId;
  public String shardKey;
  public long round;
  public int sourcePartition;
  public long sourceOffset;

  /**
   * ADMIT: the C to clip the update to (the round's, under adaptive clipping); 0 in commands from
   * versions without it: the spec's C then.
   */
  public double clipNorm;

  /** SEAL: how many updates of the round this shard was told to admit. */
  public long expected;

  /**
   * ADMIT of an update that a state from an earlier version held with its values: they come along,
   * since the shard never received them. Null otherwise.
   */
  public byte[][] tensorData;

  public ShardCommand() {}

  public static ShardCommand admit(DecodedUpdate update, String shardKey, double clipNorm) {
    ShardCommand c = at(Kind.ADMIT, update.jobId, shardKey, update.round);
    c.clipNorm = clipNorm;
    c.sourcePartition = update.sourcePartition;
    c.sourceOffset = update.sourceOffset;
    c.tensorData = update.tensorData;
    return c;
  }

  public static ShardCommand drop(DecodedUpdate update) {
    ShardCommand c = at(Kind.DROP, update.jobId, update.shardKey, update.round);
    c.sourcePartition = update.sourcePartition;
    c.sourceOffset = update.sourceOffset;
    return c;
  }

  public static ShardCommand discard(String jobId, String shardKey, long round) {
    return at(Kind.DISCARD, jobId, shardKey, round);
  }

  public static ShardCommand seal(String jobId, String shardKey, long round, long expected) {
    ShardCommand c = at(Kind.SEAL, jobId, shardKey, round);
    c.expected = expected;
    return c;
  }

  private static ShardCommand at(Kind kind, String jobId, String shardKey, long round) {
    ShardCommand c = new ShardCommand();
    c.kind = kind;
    c.jobId = jobId;
    c.shardKey = shardKey;
    c.round = round;
    return c;
  }

  /** The update's place in the updates log, which names it between decider and shard. */
  public String position() {
    return DecodedUpdate.position(sourcePartition, sourceOffset);
  }
}
