package dev.privagg.job;

/** A round at the combiner: the partial sums received so far, and the decider's seal once sent. */
public class CombinedRound {
  /** Null until a partial with members arrived. */
  public long[] units;

  public long contributions;
  public long clipped;

  /** Shard keys whose partials are in. */
  public String[] received = new String[0];

  /** The decider's SEALED signal; null until it arrived. */
  public RoundSignal sealed;

  public CombinedRound() {}

  /** Every shard the seal names has sent its partial. */
  public boolean complete() {
    if (sealed == null) {
      return false;
    }
    for (String shard : sealed.shards) {
      if (!java.util.Arrays.asList(received).contains(shard)) {
        return false;
      }
    }
    return true;
  }
}
