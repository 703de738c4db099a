package dev.privagg.job;

/** Accumulator of the open round: fixed-point clipped sum and counts. O(model size). */
public class OpenRound {
  public long[] units;
  public long contributions;
  public long clipped;

  public OpenRound() {}

  OpenRound(int dimension) {
    this.units = new long[dimension];
  }
}
