package dev.privagg.job;

/**
 * A decoded, shape-checked client update: tensors in the job spec's order, all values finite.
 * Carries its source position so later rejects can point back to the original record.
 */
public class DecodedUpdate {
  public String jobId;
  public String clientId;
  public long round;
  public float[][] tensors;
  public String sourceTopic;
  public int sourcePartition;
  public long sourceOffset;

  public DecodedUpdate() {}

  public DecodedUpdate(
      String jobId, String clientId, long round, float[][] tensors, RawUpdate source) {
    this.jobId = jobId;
    this.clientId = clientId;
    this.round = round;
    this.tensors = tensors;
    this.sourceTopic = source.topic;
    this.sourcePartition = source.partition;
    this.sourceOffset = source.offset;
  }
}
