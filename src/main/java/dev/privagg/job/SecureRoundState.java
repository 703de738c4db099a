package dev.privagg.job;

/**
 * The decider's state of one secure-aggregation round (docs/secure-aggregation.md): its session and
 * phase deadlines, the roster in admission order with each client's advertised keys, the neighbour
 * graph, who completed which phase, and the share and unmask messages kept until they are routed or
 * used. Its size is O(roster x degree); it is cleared with the round.
 */
public class SecureRoundState {
  public long round;
  public byte[] session;
  public long advertiseDeadlineMillis;
  public long shareDeadlineMillis;
  public long maskedInputDeadlineMillis;
  public long unmaskDeadlineMillis;
  public double clipNorm;

  /** The phase whose messages are taken now: 1 to 4 (see {@link SecureUpdate}), 5 when past. */
  public int phase;

  /** Per roster index: the client's key (id digest), its shard, and its 96 advertised bytes. */
  public String[] clientKeys = new String[0];

  public String[] shardKeys = new String[0];
  public byte[][] advertised = new byte[0][];

  /** The Harary graph, set when the roster closes. */
  public int degree;

  public int threshold;
  public int[] permutation = new int[0];

  /** Per roster index: its phase 2 message (the ShareKeys record), once accepted. */
  public byte[][] shareMessages = new byte[0][];

  /** Per roster index: whether its masked input was admitted (U3). */
  public boolean[] maskedInput = new boolean[0];

  /** Per roster index: its phase 4 message (the UnmaskShares record), once accepted. */
  public byte[][] unmaskMessages = new byte[0][];

  public SecureRoundState() {}

  /** The roster index of {@code clientKey}, or -1. */
  public int indexOf(String clientKey) {
    for (int i = 0; i < clientKeys.length; i++) {
      if (clientKeys[i].equals(clientKey)) {
        return i;
      }
    }
    return -1;
  }

  /** The roster's size. */
  public int size() {
    return clientKeys.length;
  }
}
