package dev.privagg.job;

/** One shard's share of a sealed round: its fixed-point clipped sum and counts. */
public class RoundPartial {
  public String jobId;
  public String shardKey;
  public long round;
  public long[] units;
  public long contributions;
  public long clipped;

  public RoundPartial() {}

  public RoundPartial(String jobId, String shardKey, long round, ShardRound sums) {
    this.jobId = jobId;
    this.shardKey = shardKey;
    this.round = round;
    this.units = sums.units;
    this.contributions = sums.contributions;
    this.clipped = sums.clipped;
  }
}
