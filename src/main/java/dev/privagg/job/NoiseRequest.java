package dev.privagg.job;

/**
 * A sealed round of a correlated-noise job, sent to one noise block: generate your coordinates'
 * share of round {@code round}'s noise (released or not: the buffers pass every round's Z).
 */
public class NoiseRequest {
  public String jobId;
  public long round;
  public int block;

  /** The routing key of the block (see {@code NoiseBlocks#keys}). */
  public String blockKey;

  public NoiseRequest() {}

  public NoiseRequest(String jobId, long round, int block, String blockKey) {
    this.jobId = jobId;
    this.round = round;
    this.block = block;
    this.blockKey = blockKey;
  }
}
