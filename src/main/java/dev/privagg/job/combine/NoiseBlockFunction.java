package dev.privagg.job.combine;

import dev.privagg.job.NoiseBuffers;
import dev.privagg.job.NoiseRequest;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.metrics.StageTimer;
import dev.privagg.job.state.KeyedState;
import dev.privagg.job.state.StateSerializers;
import dev.privagg.spec.JobSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The noise blocks of correlated-noise jobs, one per key (see {@link NoiseBlocks}): each keeps its
 * coordinates' BLT buffers in keyed state and answers each sealed round with its noise, which the
 * combiner adds to the sum.
 */
public final class NoiseBlockFunction
    extends KeyedProcessFunction<String, NoiseRequest, RoundPartial> {
  static final String BUFFERS_STATE = "noise-buffers";

  private final Map<String, JobSpec> specs = new HashMap<>();
  private final Map<String, LedgerFloor> floors;
  private transient Map<String, NoiseBlocks> jobs;
  private transient ValueState<NoiseBuffers> buffers;
  private transient StageTimer noiseTime;

  public NoiseBlockFunction(List<JobSpec> specs, Map<String, LedgerFloor> floors) {
    for (JobSpec spec : specs) {
      if (spec.correlated()) {
        this.specs.put(spec.jobId(), spec);
      }
    }
    this.floors = new HashMap<>(floors);
  }

  @Override
  public void open(OpenContext context) {
    buffers =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>(BUFFERS_STATE, StateSerializers.NOISE_BUFFERS));
    noiseTime = new StageTimer(getRuntimeContext().getMetricGroup(), "correlatedNoise");
    jobs = new HashMap<>();
    for (JobSpec spec : specs.values()) {
      LedgerFloor floor = floors.getOrDefault(spec.jobId(), LedgerFloor.NONE);
      jobs.put(spec.jobId(), new NoiseBlocks(spec, NoiseSources.forSpec(spec, floor.deployment())));
    }
  }

  @Override
  public void processElement(NoiseRequest request, Context ctx, Collector<RoundPartial> out) {
    long started = StageTimer.start();
    NoiseBlocks.Generated generated;
    try {
      generated = jobs.get(request.jobId).generate(KeyedState.call(buffers::value), request);
    } catch (CorrelatedNoise.MismatchException e) {
      // A restart would meet the same state: fail the job with the reason instead.
      throw new SuppressRestartsException(e);
    }
    KeyedState.run(() -> buffers.update(generated.buffers()));
    noiseTime.stop(started);
    out.collect(generated.partial());
  }
}
