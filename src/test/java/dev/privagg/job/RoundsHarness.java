package dev.privagg.job;

import dev.privagg.job.combine.CombineFunction;
import dev.privagg.job.combine.UnmaskBlockFunction;
import dev.privagg.job.decide.DecideFunction;
import dev.privagg.job.decode.ClientKeys;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.job.shard.ShardSumFunction;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;

/**
 * The job's three round operators in Flink's operator test harnesses, wired as the pipeline wires
 * them: an update's values go to its shard and the rest to the decider; the decider's commands go
 * to the shards, its signals, the shards' partial sums and (secure jobs) the unmask blocks'
 * partials to the combiner. Outputs of the decider and the combiner come out as one list, as they
 * reach the sink.
 */
final class RoundsHarness implements AutoCloseable {
  /** The three operators' state at one checkpoint. */
  record Snapshot(
      OperatorSubtaskState decider, OperatorSubtaskState shards, OperatorSubtaskState combiner) {}

  private final KeyedTwoInputStreamOperatorTestHarness<
          String, DecodedUpdate, String, OutboundRecord>
      decider;
  private final KeyedTwoInputStreamOperatorTestHarness<
          String, DecodedUpdate, ShardCommand, RoundPartial>
      shards;
  private final KeyedTwoInputStreamOperatorTestHarness<
          String, RoundPartial, RoundSignal, OutboundRecord>
      combiner;
  private final KeyedCoProcessOperator<String, DecodedUpdate, String, OutboundRecord> deciderOp;
  private final ShardPlan plan;
  private final ClientKeys clientKeys = new ClientKeys();
  private final List<OutboundRecord> output = new ArrayList<>();
  private final java.util.Set<String> positions = new java.util.HashSet<>();
  private long nextFreeOffset = 1L << 40;

  RoundsHarness(List<JobSpec> specs, Map<String, LedgerFloor> floors) throws Exception {
    this(new DecideFunction(specs, floors, Long.MAX_VALUE, new ShardPlan(2)), specs, floors);
  }

  RoundsHarness(DecideFunction aggregator, List<JobSpec> specs, Map<String, LedgerFloor> floors)
      throws Exception {
    this.plan = new ShardPlan(2);
    deciderOp = new KeyedCoProcessOperator<>(aggregator);
    decider =
        new KeyedTwoInputStreamOperatorTestHarness<>(
            deciderOp, u -> u.jobId, id -> id, Types.STRING);
    shards =
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new KeyedCoProcessOperator<>(new ShardSumFunction(specs)),
            u -> u.shardKey,
            c -> c.shardKey,
            Types.STRING);
    combiner =
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new KeyedCoProcessOperator<>(new CombineFunction(specs, floors)),
            p -> p.jobId,
            s -> s.jobId,
            Types.STRING);
  }

  /** The decider's operator, to set its current key in tests that write its state directly. */
  KeyedCoProcessOperator<String, DecodedUpdate, String, OutboundRecord> deciderOperator() {
    return deciderOp;
  }

  void setProcessingTime(long millis) throws Exception {
    decider.setProcessingTime(millis);
  }

  void initializeState(Snapshot snapshot) throws Exception {
    decider.initializeState(snapshot.decider());
    if (snapshot.shards() != null) {
      shards.initializeState(snapshot.shards());
      combiner.initializeState(snapshot.combiner());
    }
  }

  /** Restores the decider alone from a state an earlier version wrote (one operator then). */
  void initializeDeciderState(OperatorSubtaskState state) throws Exception {
    decider.initializeState(state);
  }

  void open() throws Exception {
    decider.open();
    shards.open();
    combiner.open();
  }

  /**
   * An update read at broker time {@code timestamp}: values to its shard, the rest to the decider.
   */
  void processElement1(DecodedUpdate update, long timestamp) throws Exception {
    if (!update.keepAlive && update.tensorData != null) {
      // Fixtures often leave every update at one log position; in a log each has its own, and the
      // shard finds an update's values by it.
      while (!positions.add(update.position())) {
        update.sourceOffset = nextFreeOffset++;
      }
      update.clientKey = clientKeys.of(update.clientId);
      update.shardKey = plan.keyFor(update.jobId, update.clientKey);
      shards.processElement1(update, timestamp);
      decider.processElement1(update.withoutValues(), timestamp);
    } else {
      decider.processElement1(update, timestamp);
    }
    pump();
  }

  void processElement2(String jobId, long timestamp) throws Exception {
    decider.processElement2(jobId, timestamp);
    pump();
  }

  void processBothWatermarks(Watermark watermark) throws Exception {
    decider.processBothWatermarks(watermark);
    pump();
  }

  /** Keyed state entries of the decider. */
  int numKeyedStateEntries() {
    return decider.numKeyedStateEntries();
  }

  /** Keyed state entries of the shards and the combiner (the model once one was released). */
  int numSummingStateEntries() {
    return shards.numKeyedStateEntries() + combiner.numKeyedStateEntries();
  }

  int numEventTimeTimers() {
    return decider.numEventTimeTimers();
  }

  /** Everything the decider and the combiner emitted since the last clear. */
  List<OutboundRecord> extractOutputValues() {
    return new ArrayList<>(output);
  }

  /** The output list itself, so tests can clear it. */
  List<OutboundRecord> getOutput() {
    return output;
  }

  Snapshot snapshot(long checkpointId, long timestamp) throws Exception {
    return new Snapshot(
        decider.snapshot(checkpointId, timestamp),
        shards.snapshot(checkpointId, timestamp),
        combiner.snapshot(checkpointId, timestamp));
  }

  @Override
  public void close() throws Exception {
    decider.close();
    shards.close();
    combiner.close();
  }

  /** Moves records between the operators until none is in flight. */
  private void pump() throws Exception {
    output.addAll(decider.extractOutputValues());
    decider.getOutput().clear();
    var commands = decider.getSideOutput(DecideFunction.SHARD_COMMANDS);
    if (commands != null) {
      for (StreamRecord<ShardCommand> command : List.copyOf(commands)) {
        shards.processElement2(command.getValue(), 0);
      }
      commands.clear();
    }
    var signals = decider.getSideOutput(DecideFunction.ROUND_SIGNALS);
    if (signals != null) {
      for (StreamRecord<RoundSignal> signal : List.copyOf(signals)) {
        combiner.processElement2(signal.getValue(), 0);
      }
      signals.clear();
    }
    for (RoundPartial partial : shards.extractOutputValues()) {
      combiner.processElement1(partial, 0);
    }
    shards.getOutput().clear();
    var unmaskRequests = decider.getSideOutput(DecideFunction.UNMASK_REQUESTS);
    if (unmaskRequests != null) {
      // A secure job's unmask blocks, stateless: their partials reach the combiner last, after the
      // seal and the shards' partials, the order in which a seal that forgot them shows.
      for (StreamRecord<UnmaskRequest> request : List.copyOf(unmaskRequests)) {
        combiner.processElement1(new UnmaskBlockFunction().map(request.getValue()), 0);
      }
      unmaskRequests.clear();
    }
    output.addAll(combiner.extractOutputValues());
    combiner.getOutput().clear();
  }
}
