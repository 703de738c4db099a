package dev.privagg.job.state;

import dev.privagg.job.ShardCommand;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link ShardCommand} in state. */
final class ShardCommandLayout extends StateLayout<ShardCommand> {
  private static final long serialVersionUID = 1L;
  static final ShardCommandLayout INSTANCE = new ShardCommandLayout();

  private ShardCommandLayout() {
    super("shard-command", 1, ShardCommand.class);
  }

  @Override
  void write(ShardCommand v, DataOutputView out) throws IOException {
    Fields.writeEnum(v.kind, out);
    Fields.writeString(v.jobId, out);
    Fields.writeString(v.shardKey, out);
    out.writeLong(v.round);
    out.writeInt(v.sourcePartition);
    out.writeLong(v.sourceOffset);
    out.writeDouble(v.clipNorm);
    out.writeLong(v.expected);
    Fields.writeByteArrays(v.tensorData, out);
  }

  @Override
  ShardCommand read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    ShardCommand v = new ShardCommand();
    v.kind = Fields.readEnum(ShardCommand.Kind.class, in);
    v.jobId = Fields.readString(in);
    v.shardKey = Fields.readString(in);
    v.round = in.readLong();
    v.sourcePartition = in.readInt();
    v.sourceOffset = in.readLong();
    v.clipNorm = in.readDouble();
    v.expected = in.readLong();
    v.tensorData = Fields.readByteArrays(in);
    return v;
  }
}
