package dev.privagg.job;

import dev.privagg.io.KafkaConnection;
import dev.privagg.job.combine.CombineFunction;
import dev.privagg.job.combine.NoiseBlockFunction;
import dev.privagg.job.combine.NoiseRequestsFunction;
import dev.privagg.job.combine.UnmaskBlockFunction;
import dev.privagg.job.decide.DecideFunction;
import dev.privagg.job.decode.DecodeFunction;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.job.shard.ShardSumFunction;
import dev.privagg.spec.JobSpec;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The privagg dataflow, from raw update records to encoded output records (docs/design.md, Data
 * flow). Production wires Kafka to both ends ({@link PrivaggJob}); tests call the same method.
 */
public final class Pipeline {
  /** Interval of heartbeat ticks: rounds close at most about this much after their deadline. */
  static final long HEARTBEAT_MILLIS = 100;

  private Pipeline() {}

  /** Builds the pipeline for jobs with nothing published yet. */
  public static DataStream<OutboundRecord> build(
      StreamExecutionEnvironment env, List<JobSpec> specs, DataStream<RawUpdate> updates) {
    return build(env, specs, updates, Map.of(), null, Long.MAX_VALUE);
  }

  /**
   * Builds decode -> (metadata) keyBy(jobId) -> decider, (values) keyBy(shard) -> shard sums ->
   * keyBy(jobId) -> combiner, and returns every output record (rejects included); {@code floors} is
   * what the ledger and model topics already show per job; with {@code heartbeatKafka} set, the
   * decode step writes heartbeat ticks to the updates topic; a new job's round 1 opens at {@code
   * runStartMillis} (or later, when the job starts).
   */
  static DataStream<OutboundRecord> build(
      StreamExecutionEnvironment env,
      List<JobSpec> specs,
      DataStream<RawUpdate> updates,
      Map<String, LedgerFloor> floors,
      KafkaConnection heartbeatKafka,
      long runStartMillis) {
    if (specs.isEmpty()) {
      throw new IllegalArgumentException("at least one job spec is needed");
    }
    // No operator changes a record it was handed, and the ones that keep records (the decider
    // holds updates until their broker time, a shard holds values until the decider's command)
    // sit behind a keyBy, which deserializes its own copies: chained operators may pass records by
    // reference instead of deep-copying each multi-megabyte update between them.
    env.getConfig().enableObjectReuse();
    ShardPlan shards = new ShardPlan(Math.max(1, env.getParallelism()));
    SingleOutputStreamOperator<DecodedUpdate> decoded =
        updates
            .process(new DecodeFunction(specs, heartbeatKafka, HEARTBEAT_MILLIS, shards))
            .name("decode-validate")
            .uid("decode-validate");

    // One start event per job publishes round 0 and opens round 1 without waiting for traffic;
    // replayed after a restore, it is ignored because the job's state already exists.
    DataStream<String> starts =
        env.fromData(Types.STRING, specs.stream().map(JobSpec::jobId).toArray(String[]::new))
            .name("job-starts")
            .uid("job-starts");

    // The decider sees who sent what and when, never the values: its per-update work and state
    // are the same for every model size.
    SingleOutputStreamOperator<OutboundRecord> rounds =
        decoded
            .map(DecodedUpdate::withoutValues)
            .name("update-metadata")
            .uid("update-metadata")
            .keyBy(u -> u.jobId, Types.STRING)
            .connect(starts.keyBy(id -> id, Types.STRING))
            .process(new DecideFunction(specs, floors, runStartMillis, shards))
            .name("round-aggregator")
            .uid("round-aggregator");

    // Values go from the decode step straight to their shard, where they are clipped and summed in
    // parallel as the decider admits them.
    SingleOutputStreamOperator<RoundPartial> partials =
        decoded
            .filter(u -> !u.keepAlive && u.carriesValues())
            .name("update-values")
            .uid("update-values")
            .keyBy(u -> u.shardKey, Types.STRING)
            .connect(
                rounds
                    .getSideOutput(DecideFunction.SHARD_COMMANDS)
                    .keyBy(c -> c.shardKey, Types.STRING))
            .process(new ShardSumFunction(specs))
            .name("shard-sums")
            .uid("shard-sums")
            .setParallelism(shards.shards())
            .setMaxParallelism(ShardPlan.MAX_PARALLELISM);

    // Correlated noise (privacy.mechanism: blt): each sealed round asks every noise block of its
    // job for its coordinates' share, generated from the block's own buffers in parallel.
    DataStream<RoundPartial> noiseBlocks =
        rounds
            .getSideOutput(DecideFunction.ROUND_SIGNALS)
            .flatMap(new NoiseRequestsFunction(specs))
            .name("noise-requests")
            .uid("noise-requests")
            .keyBy(r -> r.blockKey, Types.STRING)
            .process(new NoiseBlockFunction(specs, floors))
            .name("noise-blocks")
            .uid("noise-blocks")
            .setParallelism(shards.shards())
            .setMaxParallelism(ShardPlan.MAX_PARALLELISM);

    // Secure aggregation (aggregation.mode: secure): each closed round asks every unmask block for
    // its coordinates' mask correction, expanded in parallel like the shards' sums.
    DataStream<RoundPartial> unmaskBlocks =
        rounds
            .getSideOutput(DecideFunction.UNMASK_REQUESTS)
            .keyBy(r -> r.blockKey, Types.STRING)
            .map(new UnmaskBlockFunction())
            .name("unmask-blocks")
            .uid("unmask-blocks")
            .setParallelism(shards.shards())
            .setMaxParallelism(ShardPlan.MAX_PARALLELISM);

    SingleOutputStreamOperator<OutboundRecord> releases =
        partials
            .union(noiseBlocks, unmaskBlocks)
            .keyBy(p -> p.jobId, Types.STRING)
            .connect(
                rounds
                    .getSideOutput(DecideFunction.ROUND_SIGNALS)
                    .keyBy(s -> s.jobId, Types.STRING))
            .process(new CombineFunction(specs, floors))
            .name("round-combiner")
            .uid("round-combiner");

    return rounds.union(releases, decoded.getSideOutput(DecodeFunction.REJECTS));
  }
}
