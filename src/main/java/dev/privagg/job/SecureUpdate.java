package dev.privagg.job;

/**
 * A client's message in one phase of secure aggregation (docs/secure-aggregation.md), decoded and
 * size-checked. Phase 4's masked input travels like an update's values ({@code tensorData} holds
 * its 8 d bytes) to the client's shard; the other phases' messages are small and go to the decider
 * whole ({@link #message}, the record as received).
 */
public class SecureUpdate extends DecodedUpdate {
  /** Advertise keys. */
  public static final int ADVERTISE = 1;

  /** Share keys. */
  public static final int SHARE = 2;

  /** Receipt for the routed shares. */
  public static final int CONFIRM = 3;

  /** Masked input. */
  public static final int MASKED_INPUT = 4;

  /** Survivor signature (the consistency round). */
  public static final int CONSISTENCY = 5;

  /** Unmask. */
  public static final int UNMASK = 6;

  /**
   * One of {@link #ADVERTISE}, {@link #SHARE}, {@link #CONFIRM}, {@link #MASKED_INPUT}, {@link
   * #CONSISTENCY}, {@link #UNMASK}.
   */
  public int phase;

  /** The round's 16-byte session, as the client named it. */
  public byte[] session;

  /** The SecureMessage record as received (phases 1, 2, 3, 5 and 6); null for a masked input. */
  public byte[] message;

  public SecureUpdate() {}

  public SecureUpdate(
      String jobId,
      String clientId,
      long round,
      int phase,
      byte[] session,
      byte[] message,
      byte[][] maskedInput,
      RawUpdate source) {
    super(jobId, clientId, round, maskedInput, source);
    this.phase = phase;
    this.session = session;
    this.message = message;
  }

  @Override
  public boolean carriesValues() {
    return phase == MASKED_INPUT;
  }

  @Override
  public DecodedUpdate withoutValues() {
    SecureUpdate copy = new SecureUpdate();
    copyIdentity(copy);
    copy.phase = phase;
    copy.session = session;
    copy.message = message;
    return copy;
  }
}
