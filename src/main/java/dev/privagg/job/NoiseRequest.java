package dev.privagg.job;

/**
 * A sealed round of a correlated-noise job, sent to one noise block: generate your coordinates'
 * share of round {@code round}'s noise (released or not: the buffers pass every round's Z).
 */
public class NoiseRequest {
  public String jobId;
  public long round;
  public int block;

  /** The routing key of the block (see {@code NoiseBlocks#key}). */
  public String blockKey;

  /**
   * No round of the job before {@code round} was released, so none of the block's noise is public:
   * a block without buffers may build them from round 0 (the rounds before were skipped). False in
   * requests from versions without it, which then need buffers past round 1.
   */
  public boolean nothingReleasedBefore;

  public NoiseRequest() {}

  public NoiseRequest(
      String jobId, long round, int block, String blockKey, boolean nothingReleasedBefore) {
    this.jobId = jobId;
    this.round = round;
    this.block = block;
    this.blockKey = blockKey;
    this.nothingReleasedBefore = nothingReleasedBefore;
  }
}
