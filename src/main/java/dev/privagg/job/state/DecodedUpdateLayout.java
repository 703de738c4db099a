package dev.privagg.job.state;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.SecureUpdate;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Layout of {@link DecodedUpdate} in state. Version 2 adds a secure-aggregation part ({@link
 * SecureUpdate}): a flag, then the phase, the session and the message. Version 3 has the same bytes
 * and the receipt phase: a version-2 phase 3 (masked input) or 4 (unmask) is one more now. Version
 * 4 adds the consistency round before unmasking: a version-3 phase 5 (unmask) is 6 now.
 */
final class DecodedUpdateLayout extends StateLayout<DecodedUpdate> {
  private static final long serialVersionUID = 1L;
  static final DecodedUpdateLayout INSTANCE = new DecodedUpdateLayout();

  private DecodedUpdateLayout() {
    super("decoded-update", 4, DecodedUpdate.class);
  }

  @Override
  void write(DecodedUpdate v, DataOutputView out) throws IOException {
    Fields.writeString(v.jobId, out);
    Fields.writeString(v.clientId, out);
    out.writeLong(v.round);
    Fields.writeByteArrays(v.tensorData, out);
    Fields.writeString(v.sourceTopic, out);
    out.writeInt(v.sourcePartition);
    out.writeLong(v.sourceOffset);
    Fields.writeString(v.shardKey, out);
    Fields.writeString(v.clientKey, out);
    Fields.writeNullableDouble(v.norm, out);
    out.writeLong(v.valueBytes);
    out.writeBoolean(v.keepAlive);
    boolean secure = v instanceof SecureUpdate;
    out.writeBoolean(secure);
    if (secure) {
      SecureUpdate s = (SecureUpdate) v;
      out.writeInt(s.phase);
      Fields.writeBytes(s.session, out);
      Fields.writeBytes(s.message, out);
    }
  }

  @Override
  DecodedUpdate read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    DecodedUpdate v = new DecodedUpdate();
    readCommon(v, in);
    if (version >= 2 && in.readBoolean()) {
      SecureUpdate s = new SecureUpdate();
      s.phase = in.readInt();
      if (version < 3 && s.phase >= SecureUpdate.CONFIRM) {
        s.phase++;
      }
      if (version < 4 && s.phase >= SecureUpdate.CONSISTENCY) {
        s.phase++;
      }
      s.session = Fields.readBytes(in);
      s.message = Fields.readBytes(in);
      return copyInto(v, s);
    }
    return v;
  }

  private static void readCommon(DecodedUpdate v, DataInputView in) throws IOException {
    v.jobId = Fields.readString(in);
    v.clientId = Fields.readString(in);
    v.round = in.readLong();
    v.tensorData = Fields.readByteArrays(in);
    v.sourceTopic = Fields.readString(in);
    v.sourcePartition = in.readInt();
    v.sourceOffset = in.readLong();
    v.shardKey = Fields.readString(in);
    v.clientKey = Fields.readString(in);
    v.norm = Fields.readNullableDouble(in);
    v.valueBytes = in.readLong();
    v.keepAlive = in.readBoolean();
  }

  private static SecureUpdate copyInto(DecodedUpdate from, SecureUpdate to) {
    to.jobId = from.jobId;
    to.clientId = from.clientId;
    to.round = from.round;
    to.tensorData = from.tensorData;
    to.sourceTopic = from.sourceTopic;
    to.sourcePartition = from.sourcePartition;
    to.sourceOffset = from.sourceOffset;
    to.shardKey = from.shardKey;
    to.clientKey = from.clientKey;
    to.norm = from.norm;
    to.valueBytes = from.valueBytes;
    to.keepAlive = from.keepAlive;
    return to;
  }
}
