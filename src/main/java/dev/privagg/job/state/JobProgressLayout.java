package dev.privagg.job.state;

import dev.privagg.job.JobProgress;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link JobProgress} in state. */
final class JobProgressLayout extends StateLayout<JobProgress> {
  private static final long serialVersionUID = 1L;
  static final JobProgressLayout INSTANCE = new JobProgressLayout();

  private JobProgressLayout() {
    super("job-progress", 1, JobProgress.class);
  }

  @Override
  void write(JobProgress v, DataOutputView out) throws IOException {
    out.writeLong(v.currentRound);
    out.writeLong(v.modelRound);
    out.writeLong(v.openedMillis);
    out.writeLong(v.deadlineMillis);
    out.writeBoolean(v.closedEarly);
    out.writeBoolean(v.fixedSchedule);
    out.writeLong(v.reanchorMillis);
    out.writeBoolean(v.exhausted);
    Fields.writeBytes(v.ledger, out);
    out.writeDouble(v.clipNorm);
    Fields.writeFloats(v.model, out);
  }

  @Override
  JobProgress read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    JobProgress v = new JobProgress();
    v.currentRound = in.readLong();
    v.modelRound = in.readLong();
    v.openedMillis = in.readLong();
    v.deadlineMillis = in.readLong();
    v.closedEarly = in.readBoolean();
    v.fixedSchedule = in.readBoolean();
    v.reanchorMillis = in.readLong();
    v.exhausted = in.readBoolean();
    v.ledger = Fields.readBytes(in);
    v.clipNorm = in.readDouble();
    v.model = Fields.readFloats(in);
    return v;
  }
}
