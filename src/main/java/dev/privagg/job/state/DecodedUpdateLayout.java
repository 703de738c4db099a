package dev.privagg.job.state;

import dev.privagg.job.DecodedUpdate;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link DecodedUpdate} in state. */
final class DecodedUpdateLayout extends StateLayout<DecodedUpdate> {
  private static final long serialVersionUID = 1L;
  static final DecodedUpdateLayout INSTANCE = new DecodedUpdateLayout();

  private DecodedUpdateLayout() {
    super("decoded-update", 1, DecodedUpdate.class);
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
  }

  @Override
  DecodedUpdate read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    DecodedUpdate v = new DecodedUpdate();
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
    return v;
  }
}
