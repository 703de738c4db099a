package dev.privagg.job.decide;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.JobProgress;
import dev.privagg.job.OpenRound;
import dev.privagg.job.OutboundRecord;
import dev.privagg.job.Participation;
import dev.privagg.job.RoundSignal;
import dev.privagg.job.SecureRoundState;
import dev.privagg.job.ShardCommand;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.job.state.KeyedState;
import dev.privagg.job.state.StateSerializers;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rounds of one training job per key (the job id), as decided by {@link RoundLifecycle}: the round
 * decider. Input 1: validated updates without their values (and heartbeat keep-alives); input 2:
 * job starts. Output: round 0's model, announcements, ledger entries and rejects; side outputs:
 * commands to the shards ({@link #SHARD_COMMANDS}) and signals to the combiner ({@link
 * #ROUND_SIGNALS}).
 *
 * <p>This adapter keeps the lifecycle's state in keyed state, its timers as event-time timers, and
 * turns its decisions into records, metrics and logs. Updates wait in keyed state until the
 * watermark reaches their broker timestamp; see {@link RoundLifecycle} for the rules and the bound.
 */
public final class DecideFunction
    extends KeyedCoProcessFunction<String, DecodedUpdate, String, OutboundRecord> {
  private static final Logger LOG = LoggerFactory.getLogger(DecideFunction.class);
  static final String PROGRESS_STATE = "job-progress";
  static final String OPEN_ROUND_STATE = "open-round";
  static final String SEEN_CLIENTS_STATE = "seen-clients";
  static final String HELD_COUNTS_STATE = "held-counts";
  static final String HELD_UPDATES_STATE = "held-update-entries";
  static final String PARTICIPATIONS_STATE = "participations";
  static final String MECHANISM_STATE = "mechanism";
  static final String SECURE_ROUND_STATE = "secure-round";
  public static final OutputTag<ShardCommand> SHARD_COMMANDS = new OutputTag<>("shard-commands") {};
  public static final OutputTag<RoundSignal> ROUND_SIGNALS = new OutputTag<>("round-signals") {};
  public static final OutputTag<UnmaskRequest> UNMASK_REQUESTS =
      new OutputTag<>("unmask-requests") {};

  private final Map<String, JobSpec> specs = new HashMap<>();
  private final Map<String, LedgerFloor> floors;
  private transient Map<String, Job> jobs;
  private transient ValueState<JobProgress> progressState;
  private transient ValueState<OpenRound> openRoundState;
  private transient ValueState<SecureRoundState> secureRoundState;
  // Keyed by a fixed-size digest of the client id, so a round's state does not grow with id length.
  private transient MapState<String, Boolean> seenClients;
  private transient MapState<String, Participation> participations;
  private transient ValueState<String> mechanismState;
  // Updates by broker timestamp, until the watermark reaches it. Held by reference in heap state:
  // this input comes over a keyBy, deserialized into objects that nothing upstream touches again.
  // How many are held per millisecond, and each under "timestamp/index": appending costs O(1)
  // however many share a millisecond (every record of one produce batch shares its LogAppendTime,
  // so a client decides how many do; a list per millisecond rewritten on append was O(n^2)).
  private transient MapState<Long, Integer> heldCounts;
  private transient MapState<String, DecodedUpdate> heldUpdates;

  public DecideFunction(List<JobSpec> specs, Map<String, LedgerFloor> floors) {
    this(specs, floors, Long.MAX_VALUE, new ShardPlan(1));
  }

  /**
   * {@code runStartMillis}: when this run was submitted (see {@link RoundLifecycle}); {@code
   * shards}: the job's shard plan.
   */
  public DecideFunction(
      List<JobSpec> specs, Map<String, LedgerFloor> floors, long runStartMillis, ShardPlan shards) {
    for (JobSpec spec : specs) {
      this.specs.put(spec.jobId(), spec);
    }
    this.floors = new HashMap<>(floors);
    this.runStartMillis = runStartMillis;
    this.shards = shards;
  }

  private final long runStartMillis;
  private final ShardPlan shards;

  /** One training job as this operator instance serves it. */
  private record Job(
      JobSpec spec,
      RoundLifecycle lifecycle,
      JobMetrics metrics,
      String noiseKind,
      RoundStore store,
      String deployment) {}

  @Override
  public void open(OpenContext context) {
    progressState =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>(PROGRESS_STATE, StateSerializers.JOB_PROGRESS));
    openRoundState =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>(OPEN_ROUND_STATE, StateSerializers.OPEN_ROUND));
    secureRoundState =
        getRuntimeContext()
            .getState(
                new ValueStateDescriptor<>(SECURE_ROUND_STATE, StateSerializers.SECURE_ROUND));
    seenClients =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>(SEEN_CLIENTS_STATE, Types.STRING, Types.BOOLEAN));
    mechanismState =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>(MECHANISM_STATE, StringSerializer.INSTANCE));
    participations =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    PARTICIPATIONS_STATE,
                    StringSerializer.INSTANCE,
                    StateSerializers.PARTICIPATION));
    heldCounts =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>(HELD_COUNTS_STATE, Types.LONG, Types.INT));
    heldUpdates =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    HELD_UPDATES_STATE,
                    StringSerializer.INSTANCE,
                    StateSerializers.DECODED_UPDATE));
    jobs = new HashMap<>();
    for (JobSpec spec : specs.values()) {
      LedgerFloor floor = floors.getOrDefault(spec.jobId(), LedgerFloor.NONE);
      var noise = NoiseSources.forSpec(spec, floor.deployment());
      var metrics = new JobMetrics(getRuntimeContext().getMetricGroup(), spec);
      jobs.put(
          spec.jobId(),
          new Job(
              spec,
              new RoundLifecycle(spec, noise, floor, runStartMillis, shards),
              metrics,
              noise.kind(),
              new KeyedStore(metrics),
              floor.deployment()));
    }
  }

  @Override
  public void processElement2(String jobId, Context ctx, Collector<OutboundRecord> out) {
    Job job = jobs.get(jobId);
    try {
      job.lifecycle().start(job.store(), openingTime(ctx), emitter(job, ctx, out));
    } catch (RoundLifecycle.ParticipationsLostException
        | RoundLifecycle.MechanismChangedException e) {
      // Every restart would meet the same state and topics: fail the job with the reason.
      throw new SuppressRestartsException(e);
    }
  }

  @Override
  public void processElement1(DecodedUpdate update, Context ctx, Collector<OutboundRecord> out) {
    Job job = jobs.get(update.jobId);
    DecisionEmitter emitter = emitter(job, ctx, out);
    if (update.keepAlive) {
      job.lifecycle().keepAlive(job.store(), emitter);
      return;
    }
    long eventTime = ctx.timerService().currentWatermark();
    // The source stamps every record with the broker's LogAppendTime; one without a time could not
    // wait for its turn and is decided at once.
    long appended = ctx.timestamp() != null ? ctx.timestamp() : eventTime;
    try {
      job.lifecycle().arrive(job.store(), update, appended, eventTime, openingTime(ctx), emitter);
    } catch (RoundLifecycle.ParticipationsLostException
        | RoundLifecycle.MechanismChangedException e) {
      throw new SuppressRestartsException(e);
    }
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<OutboundRecord> out) {
    Job job = jobs.get(ctx.getCurrentKey());
    // A drain (flink stop --drain, or the end of a bounded input) sends the maximum watermark and
    // fires every timer at once: real event time has not reached them.
    boolean draining = ctx.timerService().currentWatermark() == Long.MAX_VALUE;
    job.lifecycle()
        .eventTimeReached(
            job.store(), timestamp, draining, openingTime(ctx), emitter(job, ctx, out));
  }

  private static DecisionEmitter emitter(Job job, Context ctx, Collector<OutboundRecord> out) {
    return new DecisionEmitter(
        job.spec(), job.metrics(), job.noiseKind(), job.deployment(), ctx, out);
  }

  /**
   * When a job starts or adopts the ledger topic's state, its round opens now: by the wall clock,
   * but never before the event time already reached, so the deadline lies ahead of the watermark.
   */
  private static long openingTime(Context ctx) {
    return Math.max(
        ctx.timerService().currentProcessingTime(), ctx.timerService().currentWatermark());
  }

  /** The lifecycle's state in this operator's keyed state (the current key is the job id). */
  private final class KeyedStore implements RoundStore, SeenClients, HeldUpdates {
    private final JobMetrics metrics;

    KeyedStore(JobMetrics metrics) {
      this.metrics = metrics;
    }

    @Override
    public JobProgress progress() {
      return access(() -> progressState.value());
    }

    @Override
    public void saveProgress(JobProgress progress) {
      access(() -> progressState.update(progress));
    }

    @Override
    public OpenRound openRound() {
      return access(() -> openRoundState.value());
    }

    @Override
    public void saveOpenRound(OpenRound round) {
      access(() -> openRoundState.update(round));
    }

    @Override
    public SecureRoundState secureRound() {
      return access(() -> secureRoundState.value());
    }

    @Override
    public void saveSecureRound(SecureRoundState round) {
      access(() -> secureRoundState.update(round));
    }

    @Override
    public void clearRound() {
      openRoundState.clear();
      seenClients.clear();
      secureRoundState.clear();
    }

    @Override
    public SeenClients seenClients() {
      return this;
    }

    @Override
    public String mechanism() {
      return access(() -> mechanismState.value());
    }

    @Override
    public void saveMechanism(String mechanism) {
      access(() -> mechanismState.update(mechanism));
    }

    @Override
    public Participations participations() {
      return new Participations() {
        @Override
        public Participation get(String clientKey) {
          return access(() -> participations.get(clientKey));
        }

        @Override
        public void put(String clientKey, Participation participation) {
          access(() -> participations.put(clientKey, participation));
        }
      };
    }

    @Override
    public HeldUpdates held() {
      return this;
    }

    @Override
    public boolean contains(String clientKey) {
      return access(() -> seenClients.contains(clientKey));
    }

    @Override
    public void add(String clientKey) {
      access(() -> seenClients.put(clientKey, Boolean.TRUE));
    }

    @Override
    public void hold(long timestamp, DecodedUpdate update) {
      access(
          () -> {
            Integer held = heldCounts.get(timestamp);
            int index = held == null ? 0 : held;
            heldUpdates.put(heldKey(timestamp, index), update);
            heldCounts.put(timestamp, index + 1);
          });
      metrics.held(1, update.valueBytes());
    }

    @Override
    public List<DecodedUpdate> take(long timestamp) {
      Integer held = access(() -> heldCounts.get(timestamp));
      if (held == null) {
        return List.of();
      }
      List<DecodedUpdate> taken = new ArrayList<>(held);
      for (int i = 0; i < held; i++) {
        String key = heldKey(timestamp, i);
        taken.add(access(() -> heldUpdates.get(key)));
        access(() -> heldUpdates.remove(key));
      }
      access(() -> heldCounts.remove(timestamp));
      if (access(() -> heldCounts.isEmpty())) {
        metrics.noneHeld();
      } else {
        metrics.held(-taken.size(), -taken.stream().mapToLong(DecodedUpdate::valueBytes).sum());
      }
      return taken;
    }

    @Override
    public Iterable<Long> timestamps() {
      return access(() -> heldCounts.keys());
    }

    @Override
    public boolean holdsAt(long timestamp) {
      return access(() -> heldCounts.contains(timestamp));
    }
  }

  private static String heldKey(long timestamp, int index) {
    return timestamp + "/" + index;
  }

  private static <T> T access(KeyedState.Call<T> call) {
    return KeyedState.call(call);
  }

  private static void access(KeyedState.Run run) {
    KeyedState.run(run);
  }
}
