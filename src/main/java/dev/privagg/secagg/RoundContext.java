package dev.privagg.secagg;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * One protocol instance of secure aggregation: a job's round under one session. Every key and mask
 * is bound to its {@link #bytes() ctx}, {@code lp("privagg-secagg-v1") || lp(jobId) || u64(round)
 * || session}, so nothing a client sent in one instance is valid in another (for example after the
 * job restores to before the round's opening and draws a new session).
 */
public final class RoundContext {
  /** Length of the session the job draws when it opens a round. */
  public static final int SESSION_BYTES = 16;

  static final String PROTOCOL = "privagg-secagg-v1";

  private final String jobId;
  private final long round;
  private final byte[] session;
  private final byte[] bytes;

  /**
   * @param jobId the job's id, non-empty
   * @param round the round, {@code >= 1}
   * @param session the 16 random bytes of the round's {@code Opened} message
   */
  public RoundContext(String jobId, long round, byte[] session) {
    if (jobId == null || jobId.isEmpty()) {
      throw new IllegalArgumentException("jobId must be non-empty, was " + jobId);
    }
    if (round < 1) {
      throw new IllegalArgumentException("round must be >= 1, was " + round);
    }
    Bytes.requireLength("session", session, SESSION_BYTES);
    this.jobId = jobId;
    this.round = round;
    this.session = session.clone();
    this.bytes = Bytes.concat(Bytes.lp(PROTOCOL), Bytes.lp(jobId), Bytes.u64(round), this.session);
  }

  public String jobId() {
    return jobId;
  }

  public long round() {
    return round;
  }

  public byte[] session() {
    return session.clone();
  }

  /** The {@code ctx} bytes of the protocol. */
  public byte[] bytes() {
    return bytes.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RoundContext other && Arrays.equals(bytes, other.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return "RoundContext[jobId="
        + jobId
        + ", round="
        + round
        + ", session="
        + HexFormat.of().formatHex(session)
        + "]";
  }
}
