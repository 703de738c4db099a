package dev.privagg.job.state;

import dev.privagg.job.CombinedRound;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link CombinedRound} in state. */
final class CombinedRoundLayout extends StateLayout<CombinedRound> {
  private static final long serialVersionUID = 1L;
  static final CombinedRoundLayout INSTANCE = new CombinedRoundLayout();

  private CombinedRoundLayout() {
    super("combined-round", 1, CombinedRound.class);
  }

  @Override
  void write(CombinedRound v, DataOutputView out) throws IOException {
    Fields.writeLongs(v.units, out);
    out.writeLong(v.contributions);
    out.writeLong(v.clipped);
    Fields.writeStrings(v.received, out);
    out.writeBoolean(v.sealed != null);
    if (v.sealed != null) {
      RoundSignalLayout.INSTANCE.write(v.sealed, out);
    }
  }

  @Override
  CombinedRound read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    CombinedRound v = new CombinedRound();
    v.units = Fields.readLongs(in);
    v.contributions = in.readLong();
    v.clipped = in.readLong();
    v.received = Fields.readStrings(in);
    v.sealed = in.readBoolean() ? RoundSignalLayout.INSTANCE.read(1, in) : null;
    return v;
  }
}
