package dev.privagg.job.state;

import dev.privagg.job.RoundNoise;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link RoundNoise} in state. */
final class RoundNoiseLayout extends StateLayout<RoundNoise> {
  private static final long serialVersionUID = 1L;
  static final RoundNoiseLayout INSTANCE = new RoundNoiseLayout();

  private RoundNoiseLayout() {
    super("round-noise", 1, RoundNoise.class);
  }

  @Override
  void write(RoundNoise v, DataOutputView out) throws IOException {
    Fields.writeDoubles(v.values, out);
    Fields.writeStrings(v.received, out);
  }

  @Override
  RoundNoise read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    RoundNoise v = new RoundNoise(Fields.readDoubles(in));
    v.received = Fields.readStrings(in);
    return v;
  }
}
