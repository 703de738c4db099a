package dev.privagg.job;

/**
 * A closed secure round's mask correction for one block of model coordinates: expand each term's
 * mask over [offset, offset + length) and send the sum as a partial (docs/secure-aggregation.md,
 * "What the job computes"). {@code terms} holds, per term, a sign byte (+1 or -1) and the 32-byte
 * AES key of the mask.
 */
public class UnmaskRequest {
  public String jobId;
  public long round;
  public String blockKey;
  public int offset;
  public int length;
  public byte[] terms;

  public UnmaskRequest() {}

  public UnmaskRequest(
      String jobId, long round, String blockKey, int offset, int length, byte[] terms) {
    this.jobId = jobId;
    this.round = round;
    this.blockKey = blockKey;
    this.offset = offset;
    this.length = length;
    this.terms = terms;
  }
}
