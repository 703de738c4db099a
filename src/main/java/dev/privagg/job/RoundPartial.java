package dev.privagg.job;

/**
 * One shard's share of a sealed round: its fixed-point clipped sum and counts; or, from a noise
 * block of a correlated-noise job, that block's noise ({@code noise} set, from {@code
 * noiseOffset}).
 */
public class RoundPartial {
  public String jobId;
  public String shardKey;
  public long round;
  public long[] units;
  public long contributions;
  public long clipped;

  /** A noise block's values (sigma (C^-1 Z)_t on its coordinates); null from a shard. */
  public double[] noise;

  /** The first model coordinate {@code noise} covers. */
  public int noiseOffset;

  /**
   * The first model coordinate {@code units} covers: 0 from a shard (all coordinates), the block's
   * offset from an unmask block of a secure job.
   */
  public int unitsOffset;

  public RoundPartial() {}

  /** A noise block's share of round {@code round}. */
  public static RoundPartial noiseBlock(
      String jobId, String blockKey, long round, int offset, double[] noise) {
    RoundPartial p = new RoundPartial();
    p.jobId = jobId;
    p.shardKey = blockKey;
    p.round = round;
    p.noiseOffset = offset;
    p.noise = noise;
    return p;
  }

  /** An unmask block's mask correction of round {@code round} over its coordinates. */
  public static RoundPartial unmaskBlock(
      String jobId, String blockKey, long round, int offset, long[] units) {
    RoundPartial p = new RoundPartial();
    p.jobId = jobId;
    p.shardKey = blockKey;
    p.round = round;
    p.unitsOffset = offset;
    p.units = units;
    return p;
  }

  public RoundPartial(String jobId, String shardKey, long round, ShardRound sums) {
    this.jobId = jobId;
    this.shardKey = shardKey;
    this.round = round;
    this.units = sums.units;
    this.contributions = sums.contributions;
    this.clipped = sums.clipped;
  }
}
