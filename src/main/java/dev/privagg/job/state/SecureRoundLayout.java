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
    super("secure-round", 1, SecureRoundState.class);
  }

  @Override
  void write(SecureRoundState v, DataOutputView out) throws IOException {
    out.writeLong(v.round);
    Fields.writeBytes(v.session, out);
    out.writeLong(v.advertiseDeadlineMillis);
    out.writeLong(v.shareDeadlineMillis);
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
  }

  @Override
  SecureRoundState read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    SecureRoundState v = new SecureRoundState();
    v.round = in.readLong();
    v.session = Fields.readBytes(in);
    v.advertiseDeadlineMillis = in.readLong();
    v.shareDeadlineMillis = in.readLong();
    v.maskedInputDeadlineMillis = in.readLong();
    v.unmaskDeadlineMillis = in.readLong();
    v.clipNorm = in.readDouble();
    v.phase = in.readInt();
    v.clientKeys = Fields.readStrings(in);
    v.shardKeys = Fields.readStrings(in);
    v.advertised = Fields.readByteArrays(in);
    v.degree = in.readInt();
    v.threshold = in.readInt();
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
    return v;
  }
}
