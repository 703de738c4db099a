package dev.privagg.job.state;

import dev.privagg.job.ModelState;
import dev.privagg.optimizer.ServerOptimizer;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Layout of {@link ModelState} in state. */
final class ModelStateLayout extends StateLayout<ModelState> {
  private static final long serialVersionUID = 1L;
  static final ModelStateLayout INSTANCE = new ModelStateLayout();

  private ModelStateLayout() {
    super("model-state", 1, ModelState.class);
  }

  @Override
  void write(ModelState v, DataOutputView out) throws IOException {
    Fields.writeFloats(v.model, out);
    out.writeLong(v.round);
    out.writeBoolean(v.optimizer != null);
    if (v.optimizer != null) {
      Fields.writeFloats(v.optimizer.firstMoment, out);
      Fields.writeFloats(v.optimizer.secondMoment, out);
      out.writeLong(v.optimizer.steps);
    }
  }

  @Override
  ModelState read(int version, DataInputView in) throws IOException {
    requireKnown(version);
    ModelState v = new ModelState();
    v.model = Fields.readFloats(in);
    v.round = in.readLong();
    if (in.readBoolean()) {
      v.optimizer = new ServerOptimizer.State();
      v.optimizer.firstMoment = Fields.readFloats(in);
      v.optimizer.secondMoment = Fields.readFloats(in);
      v.optimizer.steps = in.readLong();
    }
    return v;
  }
}
