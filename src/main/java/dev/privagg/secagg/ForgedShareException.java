package dev.privagg.secagg;

/**
 * An encrypted share that does not decrypt under its sender's and recipient's key and context: it
 * was forged or altered on the way, or is not 92 bytes.
 */
public final class ForgedShareException extends Exception {
  private final int sender;

  ForgedShareException(int sender, int recipient, String why) {
    super("forged share from sender " + sender + " to recipient " + recipient + ": " + why);
    this.sender = sender;
  }

  /** The roster index the share claims to come from. */
  public int sender() {
    return sender;
  }
}
