package dev.privagg.job.shard;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.ShardCommand;
import dev.privagg.job.ShardRound;
import dev.privagg.job.metrics.StageTimer;
import dev.privagg.job.state.KeyedState;
import dev.privagg.job.state.RoundTable;
import dev.privagg.job.state.StateSerializers;
import dev.privagg.spec.JobSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The data-parallel part of the job: per shard key (see {@link ShardPlan}), clips and sums the
 * values of admitted updates as {@link ShardSums} says. Input 1: updates with values, from the
 * decode step; input 2: the round decider's commands. Output: one partial sum per sealed round.
 */
public final class ShardSumFunction
    extends KeyedCoProcessFunction<String, DecodedUpdate, ShardCommand, RoundPartial> {
  static final String VALUES_STATE = "waiting-values";
  static final String COMMANDS_STATE = "waiting-commands";
  static final String SUMS_STATE = "shard-sums";

  private final Map<String, JobSpec> specs = new HashMap<>();
  private transient Map<String, ShardSums> shards;
  private transient StageTimer clipTime;
  private transient Store store;

  public ShardSumFunction(List<JobSpec> specs) {
    for (JobSpec spec : specs) {
      this.specs.put(spec.jobId(), spec);
    }
  }

  @Override
  public void open(OpenContext context) {
    // Values are held by reference in heap state: this input comes over a keyBy, deserialized
    // into objects nothing upstream touches again.
    store =
        new Store(
            getRuntimeContext()
                .getMapState(
                    new MapStateDescriptor<>(
                        VALUES_STATE, StringSerializer.INSTANCE, StateSerializers.DECODED_UPDATE)),
            getRuntimeContext()
                .getMapState(
                    new MapStateDescriptor<>(
                        COMMANDS_STATE, StringSerializer.INSTANCE, StateSerializers.SHARD_COMMAND)),
            KeyedState.rounds(
                getRuntimeContext()
                    .getMapState(
                        new MapStateDescriptor<>(
                            SUMS_STATE, LongSerializer.INSTANCE, StateSerializers.SHARD_ROUND))));
    clipTime = new StageTimer(getRuntimeContext().getMetricGroup(), "clip");
    shards = new HashMap<>();
    for (JobSpec spec : specs.values()) {
      shards.put(spec.jobId(), new ShardSums(spec));
    }
  }

  @Override
  public void processElement1(DecodedUpdate update, Context ctx, Collector<RoundPartial> out) {
    shards.get(update.jobId).values(store, update, output(out));
  }

  @Override
  public void processElement2(ShardCommand command, Context ctx, Collector<RoundPartial> out) {
    shards.get(command.jobId).command(store, command, output(out));
  }

  private ShardSums.Output output(Collector<RoundPartial> out) {
    return new ShardSums.Output() {
      @Override
      public void partial(RoundPartial partial) {
        out.collect(partial);
      }

      @Override
      public void clipped(boolean clipped, long nanos) {
        clipTime.add(nanos);
      }
    };
  }

  /** The shard's state in keyed state (the current key is the shard key). */
  private record Store(
      MapState<String, DecodedUpdate> values,
      MapState<String, ShardCommand> commands,
      RoundTable<ShardRound> rounds)
      implements ShardSums.Store {
    @Override
    public DecodedUpdate takeValues(String position) {
      return KeyedState.take(values, position);
    }

    @Override
    public void holdValues(String position, DecodedUpdate update) {
      KeyedState.run(() -> values.put(position, update));
    }

    @Override
    public ShardCommand takeCommand(String position) {
      return KeyedState.take(commands, position);
    }

    @Override
    public void holdCommand(String position, ShardCommand command) {
      KeyedState.run(() -> commands.put(position, command));
    }
  }
}
