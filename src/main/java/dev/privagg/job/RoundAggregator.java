package dev.privagg.job;

import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RejectReason;
import dev.privagg.job.state.StateSerializers;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
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
import org.apache.flink.streaming.api.TimerService;
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
final class RoundAggregator
    extends KeyedCoProcessFunction<String, DecodedUpdate, String, OutboundRecord> {
  private static final Logger LOG = LoggerFactory.getLogger(RoundAggregator.class);
  static final String PROGRESS_STATE = "job-progress";
  static final String OPEN_ROUND_STATE = "open-round";
  static final String SEEN_CLIENTS_STATE = "seen-clients";
  static final String HELD_COUNTS_STATE = "held-counts";
  static final String HELD_UPDATES_STATE = "held-update-entries";
  static final OutputTag<ShardCommand> SHARD_COMMANDS = new OutputTag<>("shard-commands") {};
  static final OutputTag<RoundSignal> ROUND_SIGNALS = new OutputTag<>("round-signals") {};

  private final Map<String, JobSpec> specs = new HashMap<>();
  private final Map<String, LedgerFloor> floors;
  private transient Map<String, Job> jobs;
  private transient ValueState<JobProgress> progressState;
  private transient ValueState<OpenRound> openRoundState;
  // Keyed by a fixed-size digest of the client id, so a round's state does not grow with id length.
  private transient MapState<String, Boolean> seenClients;
  // Updates by broker timestamp, until the watermark reaches it. Held by reference in heap state:
  // this input comes over a keyBy, deserialized into objects that nothing upstream touches again.
  // How many are held per millisecond, and each under "timestamp/index": appending costs O(1)
  // however many share a millisecond (every record of one produce batch shares its LogAppendTime,
  // so a client decides how many do; a list per millisecond rewritten on append was O(n^2)).
  private transient MapState<Long, Integer> heldCounts;
  private transient MapState<String, DecodedUpdate> heldUpdates;

  RoundAggregator(List<JobSpec> specs, Map<String, LedgerFloor> floors) {
    this(specs, floors, Long.MAX_VALUE, new ShardPlan(1));
  }

  /**
   * {@code runStartMillis}: when this run was submitted (see {@link RoundLifecycle}); {@code
   * shards}: the job's shard plan.
   */
  RoundAggregator(
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
    seenClients =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>(SEEN_CLIENTS_STATE, Types.STRING, Types.BOOLEAN));
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
    job.lifecycle().start(job.store(), openingTime(ctx), new Emitter(job, ctx, out));
  }

  @Override
  public void processElement1(DecodedUpdate update, Context ctx, Collector<OutboundRecord> out) {
    Job job = jobs.get(update.jobId);
    Emitter emitter = new Emitter(job, ctx, out);
    if (update.keepAlive) {
      job.lifecycle().keepAlive(job.store(), emitter);
      return;
    }
    long eventTime = ctx.timerService().currentWatermark();
    // The source stamps every record with the broker's LogAppendTime; one without a time could not
    // wait for its turn and is decided at once.
    long appended = ctx.timestamp() != null ? ctx.timestamp() : eventTime;
    job.lifecycle().arrive(job.store(), update, appended, eventTime, openingTime(ctx), emitter);
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<OutboundRecord> out) {
    Job job = jobs.get(ctx.getCurrentKey());
    // A drain (flink stop --drain, or the end of a bounded input) sends the maximum watermark and
    // fires every timer at once: real event time has not reached them.
    boolean draining = ctx.timerService().currentWatermark() == Long.MAX_VALUE;
    job.lifecycle()
        .eventTimeReached(
            job.store(), timestamp, draining, openingTime(ctx), new Emitter(job, ctx, out));
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
    public void clearRound() {
      openRoundState.clear();
      seenClients.clear();
    }

    @Override
    public SeenClients seenClients() {
      return this;
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

  /** Turns the lifecycle's decisions for one event into records, timers, metrics and logs. */
  private final class Emitter implements RoundDecisions {
    private final JobSpec spec;
    private final JobMetrics metrics;
    private final String noiseKind;
    private final String deployment;
    private final TimerService timers;
    private final Context ctx;
    private final Collector<OutboundRecord> out;

    Emitter(Job job, Context ctx, Collector<OutboundRecord> out) {
      this.spec = job.spec();
      this.metrics = job.metrics();
      this.noiseKind = job.noiseKind();
      this.deployment = job.deployment();
      this.timers = ctx.timerService();
      this.ctx = ctx;
      this.out = out;
    }

    @Override
    public void publishInitialModel(float[] model) {
      out.collect(
          Records.model(
              spec,
              0,
              model,
              0.0,
              spec.privacy().clipNorm(),
              PrivacyLedger.EMPTY,
              null,
              noiseKind,
              deployment));
    }

    @Override
    public void announce(
        long round, long baseModelRound, long openedMillis, long deadlineMillis, double clipNorm) {
      out.collect(
          Records.announcement(
              spec, round, baseModelRound, openedMillis, deadlineMillis, deployment));
      ctx.output(ROUND_SIGNALS, RoundSignal.opened(spec.jobId(), round, clipNorm));
      metrics.clipNorm(clipNorm);
    }

    @Override
    public void skip(
        long round, PrivacyEvent charge, double epsilonSpent, double clipNorm, long atMillis) {
      metrics.epsilonSpent(epsilonSpent);
      // C does not move over a skipped round: nothing of it was counted here.
      ClosedRound.Clipping clipping =
          new ClosedRound.Clipping(
              clipNorm, null, spec.adaptiveClipping() ? Double.valueOf(clipNorm) : null);
      out.collect(
          Records.ledger(
              spec,
              round,
              LedgerOutcome.SKIPPED,
              charge,
              epsilonSpent,
              0,
              null,
              clipping,
              atMillis,
              deployment));
      LOG.warn(
          "job {}: round {} was announced by an earlier run and its deadline passed; charged as if"
              + " released (that run may have released it), epsilon {} of {}",
          spec.jobId(),
          round,
          epsilonSpent,
          spec.privacy().budgetEpsilon());
    }

    @Override
    public void admit(DecodedUpdate update, String shardKey, double clipNorm) {
      metrics.updatesAccepted.inc();
      ctx.output(SHARD_COMMANDS, ShardCommand.admit(update, shardKey, clipNorm));
    }

    @Override
    public void leaveUnsampled(DecodedUpdate update) {
      metrics.updatesNotSampled.inc();
      drop(update);
    }

    /** The update's shard holds its values until told: let them go. */
    private void drop(DecodedUpdate update) {
      if (update.shardKey != null && update.tensorData == null) {
        ctx.output(SHARD_COMMANDS, ShardCommand.drop(update));
      }
    }

    @Override
    public void reject(DecodedUpdate update, RejectReason reason, String detail) {
      metrics.rejected(reason);
      drop(update);
      // Bytes were decoded upstream; the source position identifies the original record.
      out.collect(
          Records.reject(
              spec.topics().rejects(),
              reason,
              detail,
              update.jobId,
              update.clientId,
              update.round,
              update.sourceTopic,
              update.sourcePartition,
              update.sourceOffset,
              null));
    }

    @Override
    public void release(
        ClosedRound round, long baseModelRound, OpenRound members, float[] carriedBase) {
      metrics.epsilonSpent(round.epsilonSpent());
      out.collect(ledgerEntry(round, LedgerOutcome.RELEASED));
      seal(round, true, baseModelRound, members, carriedBase);
      metrics.roundsReleased.inc();
      LOG.info(
          "job {}: round {} released; charged {} (z {}, q {}, {}); epsilon {} of {} at delta {}",
          spec.jobId(),
          round.round(),
          round.charge().kind(),
          round.charge().noiseMultiplier(),
          round.charge().samplingRate(),
          spec.roundCharge().adjacency(),
          round.epsilonSpent(),
          spec.privacy().budgetEpsilon(),
          spec.privacy().delta());
    }

    @Override
    public void withhold(ClosedRound round, OpenRound members) {
      metrics.epsilonSpent(round.epsilonSpent());
      out.collect(ledgerEntry(round, LedgerOutcome.NOT_RELEASED_MIN_COHORT));
      seal(round, false, -1, members, null);
      metrics.roundsNotReleased.inc();
      LOG.info(
          "job {}: round {} not released (noisy count under the minimum cohort); charged, epsilon"
              + " {} of {}",
          spec.jobId(),
          round.round(),
          round.epsilonSpent(),
          spec.privacy().budgetEpsilon());
    }

    /**
     * Seals the round at each shard that sums members of it (after the commands that admitted them,
     * on the same channel), and tells the combiner which shards to wait for.
     */
    private void seal(
        ClosedRound round,
        boolean release,
        long baseModelRound,
        OpenRound members,
        float[] carriedBase) {
      String[] keys = members.shardKeys == null ? new String[0] : members.shardKeys;
      for (int i = 0; i < keys.length; i++) {
        ctx.output(
            SHARD_COMMANDS,
            ShardCommand.seal(spec.jobId(), keys[i], round.round(), members.shardCounts[i]));
      }
      RoundSignal sealed =
          RoundSignal.sealed(round, release, baseModelRound, members, spec.jobId());
      sealed.carriedModel = carriedBase;
      ctx.output(ROUND_SIGNALS, sealed);
    }

    private OutboundRecord ledgerEntry(ClosedRound round, LedgerOutcome outcome) {
      return Records.ledger(
          spec,
          round.round(),
          outcome,
          round.charge(),
          round.epsilonSpent(),
          round.contributions(),
          round.noisyCount(),
          round.clipping(),
          round.closedAtMillis(),
          deployment);
    }

    @Override
    public void discard(long round, OpenRound members) {
      for (String key : members.shardKeys) {
        ctx.output(SHARD_COMMANDS, ShardCommand.discard(spec.jobId(), key, round));
      }
    }

    @Override
    public void reportFull(long round, long clientsSeen) {
      metrics.roundsFull.inc();
      LOG.warn(
          "job {}: round {} was full ({} clients); later clients were turned away (ROUND_FULL)",
          spec.jobId(),
          round,
          clientsSeen);
    }

    @Override
    public void exhaust(long round, double epsilonSpent, long atMillis) {
      LOG.warn(
          "job {}: privacy budget spent (epsilon {} of {}): round {} and later are refused",
          spec.jobId(),
          epsilonSpent,
          spec.privacy().budgetEpsilon(),
          round);
      out.collect(
          Records.ledger(
              spec,
              round,
              LedgerOutcome.BUDGET_EXHAUSTED,
              null,
              epsilonSpent,
              0,
              null,
              null,
              atMillis,
              deployment));
    }

    @Override
    public void adopt(LedgerFloor floor, long roundsInState) {
      LOG.info(
          "job {}: adopting the ledger topic's spending ({} rounds charged, last round {}, model of"
              + " round {}{}) over state that showed {} rounds",
          spec.jobId(),
          floor.rounds(),
          floor.lastRound(),
          floor.modelRound(),
          floor.exhausted() ? ", budget spent" : "",
          roundsInState);
    }

    @Override
    public void drain(long round) {
      LOG.info(
          "job {}: drained at round {}; the round is neither closed nor charged",
          spec.jobId(),
          round);
    }

    @Override
    public void registerTimer(long timestamp) {
      timers.registerEventTimeTimer(timestamp);
    }

    @Override
    public void deleteTimer(long timestamp) {
      timers.deleteEventTimeTimer(timestamp);
    }
  }

  private static <T> T access(KeyedState.Call<T> call) {
    return KeyedState.call(call);
  }

  private static void access(KeyedState.Run run) {
    KeyedState.run(run);
  }
}
