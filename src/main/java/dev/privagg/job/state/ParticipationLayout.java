package dev.privagg.job.state;

import dev.privagg.job.Participation;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link Participation} in state. */
final class ParticipationLayout extends StateLayout<Participation> {
  private static final long serialVersionUID = 1L;
  static final ParticipationLayout INSTANCE = new ParticipationLayout();

  private ParticipationLayout() {
    super("participation", 1, Participation.class);
  }

  @Override
  void write(Participation v, DataOutputView out) throws IOException {
    out.writeLong(v.count);
    out.writeLong(v.lastRound);
  }

  @Override
  Participation read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    return new Participation(in.readLong(), in.readLong());
  }
}
