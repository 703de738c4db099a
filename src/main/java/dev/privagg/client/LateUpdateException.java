package dev.privagg.client;

/**
 * The broker appended an update at or after the deadline of its round's announcement: the job,
 * which decides by the broker's append time, rejects it as stale. {@link #receipt()} says where and
 * when it landed.
 */
public final class LateUpdateException extends RuntimeException {
  private final transient UpdateReceipt receipt;

  LateUpdateException(String message, UpdateReceipt receipt) {
    super(message);
    this.receipt = receipt;
  }

  /** Where the broker holds the late update, its append time and the deadline it missed. */
  public UpdateReceipt receipt() {
    return receipt;
  }
}
