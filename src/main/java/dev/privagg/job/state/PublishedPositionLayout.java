package dev.privagg.job.state;

import dev.privagg.job.PublicRounds;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link PublicRounds.Position} in state. */
final class PublishedPositionLayout extends StateLayout<PublicRounds.Position> {
  private static final long serialVersionUID = 1L;
  static final PublishedPositionLayout INSTANCE = new PublishedPositionLayout();

  private PublishedPositionLayout() {
    super("published-position", 1, PublicRounds.Position.class);
  }

  @Override
  void write(PublicRounds.Position v, DataOutputView out) throws IOException {
    out.writeLong(v.round);
    Fields.writeBytes(v.digest, out);
    Fields.writeString(v.owner, out);
    Fields.writeString(v.tainted, out);
  }

  @Override
  PublicRounds.Position read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    PublicRounds.Position v = new PublicRounds.Position();
    v.round = in.readLong();
    v.digest = Fields.readBytes(in);
    v.owner = Fields.readString(in);
    v.tainted = Fields.readString(in);
    return v;
  }
}
