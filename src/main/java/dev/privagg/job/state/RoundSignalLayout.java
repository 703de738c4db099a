package dev.privagg.job.state;

import dev.privagg.job.RoundSignal;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link RoundSignal} in state. */
final class RoundSignalLayout extends StateLayout<RoundSignal> {
  private static final long serialVersionUID = 1L;
  static final RoundSignalLayout INSTANCE = new RoundSignalLayout();

  private RoundSignalLayout() {
    super("round-signal", 1, RoundSignal.class);
  }

  @Override
  void write(RoundSignal v, DataOutputView out) throws IOException {
    Fields.writeEnum(v.kind, out);
    Fields.writeString(v.jobId, out);
    out.writeLong(v.round);
    out.writeBoolean(v.release);
    out.writeLong(v.baseModelRound);
    Fields.writeStrings(v.shards, out);
    out.writeLong(v.contributions);
    out.writeDouble(v.epsilonSpent);
    Fields.writeBytes(v.ledger, out);
    Fields.writeBytes(v.charge, out);
    out.writeLong(v.deadlineMillis);
    out.writeDouble(v.clipNorm);
    Fields.writeLongs(v.carriedUnits, out);
    Fields.writeFloats(v.carriedModel, out);
  }

  @Override
  RoundSignal read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    RoundSignal v = new RoundSignal();
    v.kind = Fields.readEnum(RoundSignal.Kind.class, in);
    v.jobId = Fields.readString(in);
    v.round = in.readLong();
    v.release = in.readBoolean();
    v.baseModelRound = in.readLong();
    v.shards = Fields.readStrings(in);
    v.contributions = in.readLong();
    v.epsilonSpent = in.readDouble();
    v.ledger = Fields.readBytes(in);
    v.charge = Fields.readBytes(in);
    v.deadlineMillis = in.readLong();
    v.clipNorm = in.readDouble();
    v.carriedUnits = Fields.readLongs(in);
    v.carriedModel = Fields.readFloats(in);
    return v;
  }
}
