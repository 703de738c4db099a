package dev.privagg.job;

/** A shard's running fixed-point sum of one round, until the round is sealed and summed up. */
public class ShardRound {
  /** Null until the first admitted update: a shard without members of a round holds no array. */
  public long[] units;

  public long contributions;
  public long clipped;

  /** Updates the decider admitted to this shard for the round; -1 until the round is sealed. */
  public long expected = -1;

  public ShardRound() {}

  public boolean complete() {
    return expected >= 0 && contributions == expected;
  }
}
