package dev.privagg.job.state;

import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.job.NoiseBuffers;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link NoiseBuffers} in state. */
final class NoiseBuffersLayout extends StateLayout<NoiseBuffers> {
  private static final long serialVersionUID = 1L;
  static final NoiseBuffersLayout INSTANCE = new NoiseBuffersLayout();

  /**
   * The most buffers a noise block keeps: b - 1 of the most bands a banded strategy takes (a BLT
   * keeps at most 8).
   */
  static final int MAX_BUFFERS = BandedToeplitz.MAX_BANDS - 1;

  private NoiseBuffersLayout() {
    super("noise-buffers", 1, NoiseBuffers.class);
  }

  @Override
  void write(NoiseBuffers v, DataOutputView out) throws IOException {
    out.writeLong(v.round);
    Fields.writeString(v.mechanism, out);
    out.writeInt(v.buffers.length);
    for (double[] buffer : v.buffers) {
      Fields.writeDoubles(buffer, out);
    }
  }

  @Override
  NoiseBuffers read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    long round = in.readLong();
    String mechanism = Fields.readString(in);
    int m = in.readInt();
    if (m < 0 || m > MAX_BUFFERS) {
      throw new IOException(
          "corrupt state: " + m + " noise buffers (at most " + MAX_BUFFERS + " are written)");
    }
    double[][] buffers = new double[m][];
    for (int j = 0; j < m; j++) {
      buffers[j] = Fields.readDoubles(in);
    }
    return new NoiseBuffers(round, mechanism, buffers);
  }
}
