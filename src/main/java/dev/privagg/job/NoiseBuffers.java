package dev.privagg.job;

/**
 * One noise block's correlated-noise generator (operator-internal: never published): the BLT's m
 * buffers over the block's coordinates and the last round whose noise passed through them.
 * Checkpointed with the round it produced, so a restored round regenerates the same noise.
 */
public class NoiseBuffers {
  /** The last round the buffers hold (0: none yet). */
  public long round;

  /**
   * What the buffers were built for (the BLT's parameters and the noise source), so a restore under
   * other parameters is refused rather than continued with mismatched noise.
   */
  public String mechanism;

  /** m buffers of the block's size. */
  public double[][] buffers;

  public NoiseBuffers() {}

  public NoiseBuffers(long round, String mechanism, double[][] buffers) {
    this.round = round;
    this.mechanism = mechanism;
    this.buffers = buffers;
  }
}
