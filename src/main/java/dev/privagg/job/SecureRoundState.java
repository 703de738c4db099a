package dev.privagg.job;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

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
  public long confirmDeadlineMillis;
  public long maskedInputDeadlineMillis;

  /** Phase 5 ends; equal to the masked-input deadline in rounds restored from before it. */
  public long consistencyDeadlineMillis;

  public long unmaskDeadlineMillis;
  public double clipNorm;

  /** The phase whose messages are taken now: 1 to 6 (see {@link SecureUpdate}), 7 when past. */
  public int phase;

  /**
   * Per roster index: the client's key (id digest), its shard, and its advertised bytes (the 128 of
   * {@code AdvertisedKeys.bytes()}; 96, without the signing key, in rounds restored from before the
   * consistency round).
   */
  public String[] clientKeys = new String[0];

  public String[] shardKeys = new String[0];
  public byte[][] advertised = new byte[0][];

  /** The Harary graph, set when the roster closes. */
  public int degree;

  public int threshold;

  /** r: a client rejected by more than r, or rejecting more than r, leaves (ShareConfirmation). */
  public int rejectionLimit;

  public int[] permutation = new int[0];

  /**
   * T: valid survivor signatures a client needs before it unmasks (RoundThresholds), as the roster
   * was closed with; 0 for a round restored from before the consistency round, which has none.
   */
  public int signatureThreshold;

  /**
   * True for a round restored from a version before verifiable secret sharing (layouts v1 to v3):
   * its stored messages are SecureMessage v3 or older and its keys X25519 keys, which this version
   * neither decodes nor can use. Such a round finishes without a sum (noise alone, charged).
   */
  public boolean beforeVerifiableSecretSharing;

  /**
   * The masked words the round opened with: their bits (64, or the distributed noise's), their
   * count, and the distributed-noise plan its clients encoded with ("" for none); -1 words for a
   * round restored from a layout before v5, whose words were 64-bit over the model's dimension. A
   * spec that masks otherwise, or plans other shares, can neither decode the round's inputs nor
   * charge them right: such a round finishes without a sum.
   */
  public int maskedWordBits = 64;

  public int maskedDimension = -1;

  public String distributedPlan = "";

  /** Whether the round's inputs were masked as a spec of these words and plan masks them. */
  public boolean masksLike(int bits, int dimension, String plan) {
    boolean words =
        maskedWordBits == bits
            && (maskedDimension == dimension || (maskedDimension == -1 && bits == 64));
    return words && distributedPlan.equals(plan);
  }

  /** The survivor statement's digest (SurvivorStatement), set when phase 5 opens. */
  public byte[] statement = new byte[0];

  /** Per roster index: its valid phase-5 signature of {@link #statement}, once accepted. */
  public byte[][] signatures = new byte[0][];

  /** Per roster index: its phase 2 message (the ShareKeys record), once accepted. */
  public byte[][] shareMessages = new byte[0][];

  /** Per roster index: the senders its receipt rejects (phase 3), once accepted; else null. */
  public int[][] receipts = new int[0][];

  /** Per roster index: whether the receipts confirmed it (U2 from phase 4 on). */
  public boolean[] confirmed = new boolean[0];

  /** The confirmed pairs that do not mask with each other, {@code {lo, hi}}, ascending. */
  public int[][] cuts = new int[0][];

  /**
   * Per roster index and phase (share, receipt, unmask: {@link #SHARE_MESSAGE}, ...), where its
   * message was read: what a reject naming a misbehaving client points to.
   */
  public int[] messagePartitions = new int[0];

  public long[] messageOffsets = new long[0];

  public static final int SHARE_MESSAGE = 0;
  public static final int RECEIPT_MESSAGE = 1;
  public static final int UNMASK_MESSAGE = 2;

  /** Where client {@code index}'s message of {@code kind} was read. */
  public void recordPosition(int index, int kind, int partition, long offset) {
    messagePartitions[3 * index + kind] = partition;
    messageOffsets[3 * index + kind] = offset;
  }

  /** Per roster index: whether its masked input was admitted (U3). */
  public boolean[] maskedInput = new boolean[0];

  /** Per roster index: its phase 6 message (the UnmaskShares record), once accepted. */
  public byte[][] unmaskMessages = new byte[0][];

  public SecureRoundState() {}

  // While the roster grows (phase 1) its three arrays may hold spare room beyond the entries in
  // use, so that a join does not copy the roster; -1: every slot is an entry. Neither this nor the
  // indexes below are state: a copy or a restore has exact arrays and builds the indexes again.
  private transient int entries = -1;
  private transient Map<String, Integer> indexByKey;
  private transient Set<ByteBuffer> encryptionKeys;

  /** The roster index of {@code clientKey}, or -1. */
  public int indexOf(String clientKey) {
    if (indexByKey == null) {
      int n = size();
      indexByKey = new HashMap<>(2 * n + 16);
      for (int i = 0; i < n; i++) {
        indexByKey.putIfAbsent(clientKeys[i], i);
      }
    }
    Integer index = indexByKey.get(clientKey);
    return index == null ? -1 : index;
  }

  /** Whether an entry of the roster has the encryption public key {@code key} (32 bytes). */
  public boolean hasEncryptionKey(byte[] key) {
    if (encryptionKeys == null) {
      int n = size();
      encryptionKeys = new HashSet<>(2 * n + 16);
      for (int i = 0; i < n; i++) {
        encryptionKeys.add(ByteBuffer.wrap(advertised[i], 0, 32));
      }
    }
    return encryptionKeys.contains(ByteBuffer.wrap(key, 0, 32));
  }

  /**
   * Adds a client to the roster: its key, its shard and its 128 advertised bytes (encryption key,
   * mask key, commitment, signing key), in amortized constant time.
   */
  public void join(String clientKey, String shardKey, byte[] entry) {
    int n = size();
    if (n == clientKeys.length) {
      int capacity = Math.max(16, 2 * n);
      clientKeys = Arrays.copyOf(clientKeys, capacity);
      shardKeys = Arrays.copyOf(shardKeys, capacity);
      advertised = Arrays.copyOf(advertised, capacity);
    }
    clientKeys[n] = clientKey;
    shardKeys[n] = shardKey;
    advertised[n] = entry;
    entries = n + 1;
    if (indexByKey != null) {
      indexByKey.putIfAbsent(clientKey, n);
    }
    if (encryptionKeys != null) {
      encryptionKeys.add(ByteBuffer.wrap(entry, 0, 32));
    }
  }

  /** Ends the roster's growth: its arrays hold exactly its entries from now on. */
  public void fixRoster() {
    int n = size();
    if (n != clientKeys.length) {
      clientKeys = Arrays.copyOf(clientKeys, n);
      shardKeys = Arrays.copyOf(shardKeys, n);
      advertised = Arrays.copyOf(advertised, n);
    }
    entries = -1;
  }

  /**
   * {@code array} (one of the roster's three) without the spare room it may hold while the roster
   * grows: what state holds of it.
   */
  public <T> T[] inUse(T[] array) {
    return entries >= 0 && entries != array.length ? Arrays.copyOf(array, entries) : array;
  }

  /** The confirmed roster indices (U2), ascending. */
  public int[] confirmedIndices() {
    return indicesOf(confirmed);
  }

  /** The roster indices that sent a masked input (U3), ascending. */
  public int[] maskedInputIndices() {
    return indicesOf(maskedInput);
  }

  /** How many survivors' signatures phase 5 accepted. */
  public int signedCount() {
    int count = 0;
    for (byte[] signature : signatures) {
      if (signature != null) {
        count++;
      }
    }
    return count;
  }

  private static int[] indicesOf(boolean[] in) {
    int count = 0;
    for (boolean b : in) {
      if (b) {
        count++;
      }
    }
    int[] out = new int[count];
    for (int i = 0, at = 0; i < in.length; i++) {
      if (in[i]) {
        out[at++] = i;
      }
    }
    return out;
  }

  /** The roster's size. */
  public int size() {
    return entries >= 0 ? entries : clientKeys.length;
  }
}
