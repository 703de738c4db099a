package dev.privagg.job.combine;

import dev.privagg.job.CombinedRound;
import dev.privagg.job.ModelState;
import dev.privagg.job.OutboundRecord;
import dev.privagg.job.Records;
import dev.privagg.job.RoundNoise;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.RoundSignal;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.metrics.StageTimer;
import dev.privagg.job.state.KeyedState;
import dev.privagg.job.state.RoundTable;
import dev.privagg.job.state.StateSerializers;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Releases of one training job per key (the job id), as {@link CombinedRounds} computes them. Input
 * 1: the shards' partial sums; input 2: the round decider's signals. Output: encoded models.
 */
public final class CombineFunction
    extends KeyedCoProcessFunction<String, RoundPartial, RoundSignal, OutboundRecord> {
  static final String ROUNDS_STATE = "combined-rounds";
  static final String MODEL_STATE = "released-model";
  static final String ROUND_NOISE_STATE = "round-noise";

  private final Map<String, JobSpec> specs = new HashMap<>();
  private final Map<String, LedgerFloor> floors;
  private transient Map<String, Job> jobs;
  private transient StageTimer noiseTime;
  private transient StageTimer encodeTime;
  private transient Store store;

  public CombineFunction(List<JobSpec> specs, Map<String, LedgerFloor> floors) {
    for (JobSpec spec : specs) {
      this.specs.put(spec.jobId(), spec);
    }
    this.floors = new HashMap<>(floors);
  }

  private record Job(
      JobSpec spec,
      CombinedRounds rounds,
      ReleaseMetrics metrics,
      String kind,
      String deployment) {}

  @Override
  public void open(OpenContext context) {
    store =
        new Store(
            KeyedState.rounds(
                getRuntimeContext()
                    .getMapState(
                        new MapStateDescriptor<>(
                            ROUNDS_STATE,
                            LongSerializer.INSTANCE,
                            StateSerializers.COMBINED_ROUND))),
            getRuntimeContext()
                .getState(new ValueStateDescriptor<>(MODEL_STATE, StateSerializers.MODEL_STATE)),
            KeyedState.rounds(
                getRuntimeContext()
                    .getMapState(
                        new MapStateDescriptor<>(
                            ROUND_NOISE_STATE,
                            LongSerializer.INSTANCE,
                            StateSerializers.ROUND_NOISE))));
    noiseTime = new StageTimer(getRuntimeContext().getMetricGroup(), "noise");
    encodeTime = new StageTimer(getRuntimeContext().getMetricGroup(), "encode");
    jobs = new HashMap<>();
    for (JobSpec spec : specs.values()) {
      LedgerFloor floor = floors.getOrDefault(spec.jobId(), LedgerFloor.NONE);
      NoiseSource noise = NoiseSources.forSpec(spec, floor.deployment());
      jobs.put(
          spec.jobId(),
          new Job(
              spec,
              new CombinedRounds(spec, noise, floor),
              new ReleaseMetrics(getRuntimeContext().getMetricGroup(), spec.jobId()),
              noise.kind(),
              floor.deployment()));
    }
  }

  @Override
  public void processElement1(RoundPartial partial, Context ctx, Collector<OutboundRecord> out) {
    Job job = jobs.get(partial.jobId);
    job.rounds().partial(store, partial, output(job, out));
  }

  @Override
  public void processElement2(RoundSignal signal, Context ctx, Collector<OutboundRecord> out) {
    Job job = jobs.get(signal.jobId);
    if (signal.kind == RoundSignal.Kind.OPENED) {
      long started = StageTimer.start();
      job.rounds().opened(signal.round, signal.clipNorm);
      noiseTime.stop(started);
    } else {
      job.rounds().sealed(store, signal, output(job, out));
    }
  }

  private CombinedRounds.Output output(Job job, Collector<OutboundRecord> out) {
    return new CombinedRounds.Output() {
      @Override
      public void release(RoundSignal sealed, CombinedRound sums, float[] model, long noiseNanos) {
        noiseTime.add(noiseNanos);
        long started = StageTimer.start();
        OutboundRecord encoded =
            Records.model(
                job.spec(),
                sealed.round,
                model,
                sealed.epsilonSpent,
                sealed.clipNorm > 0 ? sealed.clipNorm : job.spec().privacy().clipNorm(),
                sealed.ledger == null ? null : LedgerCodec.read(sealed.ledger),
                sealed.charge == null ? null : LedgerCodec.read(sealed.charge).events().get(0),
                job.kind(),
                job.deployment());
        encodeTime.stop(started);
        out.collect(encoded);
        summedUp(sealed, sums);
      }

      @Override
      public void withhold(RoundSignal sealed, CombinedRound sums) {
        summedUp(sealed, sums);
      }

      private void summedUp(RoundSignal sealed, CombinedRound sums) {
        job.metrics()
            .round(
                sums.contributions,
                sums.clipped,
                System.currentTimeMillis() - sealed.deadlineMillis);
      }
    };
  }

  /** The combiner's state in keyed state (the current key is the job id). */
  private record Store(
      RoundTable<CombinedRound> rounds,
      ValueState<ModelState> released,
      RoundTable<RoundNoise> noise)
      implements CombinedRounds.Store {

    @Override
    public ModelState model() {
      return KeyedState.call(released::value);
    }

    @Override
    public void saveModel(ModelState state) {
      KeyedState.run(() -> released.update(state));
    }
  }
}
