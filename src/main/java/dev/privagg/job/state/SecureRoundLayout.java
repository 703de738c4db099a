package dev.privagg.job.state;

import dev.privagg.job.SecureRoundState;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link SecureRoundState} in state. */
final class SecureRoundLayout extends StateLayout<SecureRoundState> {
  private static final long serialVersionUID = 1L;
  static final SecureRoundLayout INSTANCE = new SecureRoundLayout();

  private SecureRoundLayout() {
    super("secure-round", 5, SecureRoundState.class);
  }

  @Override
  void write(SecureRoundState v, DataOutputView out) throws IOException {
    out.writeLong(v.round);
    Fields.writeBytes(v.session, out);
    out.writeLong(v.advertiseDeadlineMillis);
    out.writeLong(v.shareDeadlineMillis);
    out.writeLong(v.confirmDeadlineMillis);
    out.writeLong(v.maskedInputDeadlineMillis);
    out.writeLong(v.unmaskDeadlineMillis);
    out.writeDouble(v.clipNorm);
    out.writeInt(v.phase);
    // While the roster grows its arrays may hold spare room: only the entries are state.
    Fields.writeStrings(v.inUse(v.clientKeys), out);
    Fields.writeStrings(v.inUse(v.shardKeys), out);
    Fields.writeByteArrays(v.inUse(v.advertised), out);
    out.writeInt(v.degree);
    out.writeInt(v.threshold);
    out.writeInt(v.rejectionLimit);
    out.writeInt(v.permutation.length);
    for (int p : v.permutation) {
      out.writeInt(p);
    }
    Fields.writeByteArrays(v.shareMessages, out);
    out.writeInt(v.maskedInput.length);
    for (boolean b : v.maskedInput) {
      out.writeBoolean(b);
    }
    Fields.writeByteArrays(v.unmaskMessages, out);
    out.writeInt(v.receipts.length);
    for (int[] r : v.receipts) {
      writeInts(r, out);
    }
    out.writeInt(v.confirmed.length);
    for (boolean b : v.confirmed) {
      out.writeBoolean(b);
    }
    out.writeInt(v.cuts.length);
    for (int[] c : v.cuts) {
      out.writeInt(c[0]);
      out.writeInt(c[1]);
    }
    writeInts(v.messagePartitions, out);
    out.writeInt(v.messageOffsets.length);
    for (long o : v.messageOffsets) {
      out.writeLong(o);
    }
    out.writeLong(v.consistencyDeadlineMillis);
    out.writeInt(v.signatureThreshold);
    Fields.writeBytes(v.statement, out);
    Fields.writeByteArrays(v.signatures, out);
    out.writeBoolean(v.beforeVerifiableSecretSharing);
    out.writeInt(v.maskedWordBits);
    out.writeInt(v.maskedDimension);
    Fields.writeString(v.distributedPlan, out);
  }

  /** An int array, or null as length -1. */
  private static void writeInts(int[] values, DataOutputView out) throws IOException {
    if (values == null) {
      out.writeInt(-1);
      return;
    }
    out.writeInt(values.length);
    for (int x : values) {
      out.writeInt(x);
    }
  }

  private static int[] readInts(DataInputView in) throws IOException {
    int length = in.readInt();
    if (length < 0) {
      return null;
    }
    int[] values = new int[length];
    for (int i = 0; i < length; i++) {
      values[i] = in.readInt();
    }
    return values;
  }

  @Override
  SecureRoundState read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    SecureRoundState v = new SecureRoundState();
    v.beforeVerifiableSecretSharing = version < 4;
    v.round = in.readLong();
    v.session = Fields.readBytes(in);
    v.advertiseDeadlineMillis = in.readLong();
    v.shareDeadlineMillis = in.readLong();
    v.confirmDeadlineMillis = version >= 2 ? in.readLong() : v.shareDeadlineMillis;
    v.maskedInputDeadlineMillis = in.readLong();
    v.unmaskDeadlineMillis = in.readLong();
    v.clipNorm = in.readDouble();
    v.phase = in.readInt();
    v.clientKeys = Fields.readStrings(in);
    v.shardKeys = Fields.readStrings(in);
    v.advertised = Fields.readByteArrays(in);
    v.degree = in.readInt();
    v.threshold = in.readInt();
    if (version >= 2) {
      v.rejectionLimit = in.readInt();
    }
    v.permutation = new int[in.readInt()];
    for (int i = 0; i < v.permutation.length; i++) {
      v.permutation[i] = in.readInt();
    }
    v.shareMessages = Fields.readByteArrays(in);
    v.maskedInput = new boolean[in.readInt()];
    for (int i = 0; i < v.maskedInput.length; i++) {
      v.maskedInput[i] = in.readBoolean();
    }
    v.unmaskMessages = Fields.readByteArrays(in);
    int n = v.clientKeys.length;
    if (version < 2) {
      // v1 had no receipts: its phases 3 and 4 are now 4 and 5, and who shared is who is confirmed.
      if (v.phase >= 3) {
        v.phase++;
      }
      v.receipts = new int[v.shareMessages.length][];
      v.confirmed = new boolean[v.shareMessages.length];
      for (int i = 0; i < v.shareMessages.length; i++) {
        v.confirmed[i] = v.phase > 3 && v.shareMessages[i] != null;
      }
      v.messagePartitions = new int[3 * n];
      v.messageOffsets = new long[3 * n];
      java.util.Arrays.fill(v.messagePartitions, -1);
      java.util.Arrays.fill(v.messageOffsets, -1);
      fromBeforeConsistency(v);
      return v;
    }
    v.receipts = new int[in.readInt()][];
    for (int i = 0; i < v.receipts.length; i++) {
      v.receipts[i] = readInts(in);
    }
    v.confirmed = new boolean[in.readInt()];
    for (int i = 0; i < v.confirmed.length; i++) {
      v.confirmed[i] = in.readBoolean();
    }
    v.cuts = new int[in.readInt()][];
    for (int i = 0; i < v.cuts.length; i++) {
      v.cuts[i] = new int[] {in.readInt(), in.readInt()};
    }
    v.messagePartitions = readInts(in);
    v.messageOffsets = new long[in.readInt()];
    for (int i = 0; i < v.messageOffsets.length; i++) {
      v.messageOffsets[i] = in.readLong();
    }
    if (version < 3) {
      fromBeforeConsistency(v);
      return v;
    }
    v.consistencyDeadlineMillis = in.readLong();
    v.signatureThreshold = in.readInt();
    v.statement = Fields.readBytes(in);
    v.signatures = Fields.readByteArrays(in);
    if (version >= 4) {
      v.beforeVerifiableSecretSharing = in.readBoolean();
    }
    if (version >= 5) {
      v.maskedWordBits = in.readInt();
      v.maskedDimension = in.readInt();
      v.distributedPlan = Fields.readString(in);
    }
    return v;
  }

  /**
   * A round of a version without the consistency round (v1, v2): its unmask phase 5 is 6 now. Its
   * clients advertised no signing key and unmask straight after the survivors, so it runs to its
   * end without signatures: a zero-length phase 5 and threshold 0 (a client of today that joins a
   * roster still open refuses to unmask without them, and counts as a dropout).
   */
  private static void fromBeforeConsistency(SecureRoundState v) {
    if (v.phase >= 5) {
      v.phase++;
    }
    v.consistencyDeadlineMillis = v.maskedInputDeadlineMillis;
    v.signatureThreshold = 0;
    v.signatures = new byte[v.shareMessages.length][];
  }
}
