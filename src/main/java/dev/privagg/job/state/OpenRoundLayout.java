package dev.privagg.job.state;

import dev.privagg.job.OpenRound;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link OpenRound} in state. */
final class OpenRoundLayout extends StateLayout<OpenRound> {
  private static final long serialVersionUID = 1L;
  static final OpenRoundLayout INSTANCE = new OpenRoundLayout();

  private OpenRoundLayout() {
    super("open-round", 2, OpenRound.class);
  }

  @Override
  void write(OpenRound v, DataOutputView out) throws IOException {
    Fields.writeLongs(v.units, out);
    Fields.writeStrings(v.shardKeys, out);
    Fields.writeLongs(v.shardCounts, out);
    out.writeInt(v.fractionBits);
    out.writeLong(v.contributions);
    out.writeLong(v.clipped);
    out.writeLong(v.unclipped);
    out.writeDouble(v.clipNorm);
    out.writeLong(v.seen);
    out.writeBoolean(v.legacyClientIds);
    out.writeBoolean(v.turnedAway);
    out.writeDouble(v.samplingRate);
  }

  @Override
  OpenRound read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    OpenRound v = new OpenRound();
    v.units = Fields.readLongs(in);
    v.shardKeys = Fields.readStrings(in);
    v.shardCounts = Fields.readLongs(in);
    v.fractionBits = in.readInt();
    v.contributions = in.readLong();
    v.clipped = in.readLong();
    v.unclipped = in.readLong();
    v.clipNorm = in.readDouble();
    v.seen = in.readLong();
    v.legacyClientIds = in.readBoolean();
    v.turnedAway = in.readBoolean();
    // Version 1 did not record the rate: 0 means the spec's.
    v.samplingRate = version >= 2 ? in.readDouble() : 0;
    return v;
  }
}
