package dev.privagg.job.state;

import dev.privagg.job.ShardRound;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link ShardRound} in state. */
final class ShardRoundLayout extends StateLayout<ShardRound> {
  private static final long serialVersionUID = 1L;
  static final ShardRoundLayout INSTANCE = new ShardRoundLayout();

  private ShardRoundLayout() {
    super("shard-round", 1, ShardRound.class);
  }

  @Override
  void write(ShardRound v, DataOutputView out) throws IOException {
    Fields.writeLongs(v.units, out);
    out.writeLong(v.contributions);
    out.writeLong(v.clipped);
    out.writeLong(v.expected);
  }

  @Override
  ShardRound read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    ShardRound v = new ShardRound();
    v.units = Fields.readLongs(in);
    v.contributions = in.readLong();
    v.clipped = in.readLong();
    v.expected = in.readLong();
    return v;
  }
}
