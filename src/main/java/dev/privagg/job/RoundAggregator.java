package dev.privagg.job;

import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RejectReason;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.BudgetStatus;
import dev.privagg.privacy.ClipResult;
import dev.privagg.privacy.ClippedSum;
import dev.privagg.privacy.ClippingPolicy;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.privacy.NoisyAverage;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Rounds of one training job per key (the job id). Input 1: validated updates; input 2: job starts.
 * Output: encoded models, announcements, ledger entries and rejects.
 *
 * <p>Round r opens when r-1 closes and is announced with its deadline. Every valid update for r
 * that reaches this operator before the deadline is clipped into the fixed-point sum, up to the
 * spec's {@code rounds.maxClients} (then ROUND_FULL). At the deadline (or at m updates when the
 * spec closes early) the round is charged to the ledger, and released only if the budget still
 * holds afterwards (DESIGN invariants 4 and 8).
 */
final class RoundAggregator
    extends KeyedCoProcessFunction<String, DecodedUpdate, String, OutboundRecord> {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(RoundAggregator.class);
  static final String PROGRESS_STATE = "job-progress";
  static final String OPEN_ROUND_STATE = "open-round";
  static final String SEEN_CLIENTS_STATE = "seen-clients";

  private final Map<String, JobSpec> specs = new HashMap<>();
  private final Map<String, LedgerFloor> floors;
  private transient java.util.Set<String> reconciled;
  private transient Map<String, NoiseSource> noiseSources;
  private transient Map<String, JobMetrics> metrics;
  // Derived from the specs once: the per-update path must not rebuild them.
  private transient Map<String, ClippingPolicy> clippingPolicies;
  private transient Map<String, int[]> tensorSizes;
  // One update's values per job, reused: the per-update path allocates no model-sized arrays.
  private transient Map<String, float[][]> scratch;
  private transient StageTimer clipTime;
  private transient StageTimer noiseTime;
  private transient StageTimer encodeTime;
  private transient ValueState<JobProgress> progressState;
  private transient ValueState<OpenRound> openRoundState;
  // Keyed by a fixed-size digest of the client id, so a round's state does not grow with id length.
  private transient MapState<String, Boolean> seenClients;
  private transient ClientKeys clientKeys;

  RoundAggregator(List<JobSpec> specs, Map<String, LedgerFloor> floors) {
    for (JobSpec spec : specs) {
      this.specs.put(spec.jobId(), spec);
    }
    this.floors = new HashMap<>(floors);
  }

  @Override
  public void open(OpenContext context) {
    progressState =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>(PROGRESS_STATE, Types.POJO(JobProgress.class)));
    openRoundState =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>(OPEN_ROUND_STATE, Types.POJO(OpenRound.class)));
    seenClients =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>(SEEN_CLIENTS_STATE, Types.STRING, Types.BOOLEAN));
    noiseSources = new HashMap<>();
    metrics = new HashMap<>();
    clipTime = new StageTimer(getRuntimeContext().getMetricGroup(), "clip");
    noiseTime = new StageTimer(getRuntimeContext().getMetricGroup(), "noise");
    encodeTime = new StageTimer(getRuntimeContext().getMetricGroup(), "encode");
    clippingPolicies = new HashMap<>();
    tensorSizes = new HashMap<>();
    scratch = new HashMap<>();
    for (JobSpec spec : specs.values()) {
      clippingPolicies.put(spec.jobId(), spec.clippingPolicy());
      tensorSizes.put(spec.jobId(), spec.model().tensorSizes());
      scratch.put(
          spec.jobId(),
          java.util.Arrays.stream(spec.model().tensorSizes())
              .mapToObj(float[]::new)
              .toArray(float[][]::new));
      noiseSources.put(spec.jobId(), NoiseSources.forSpec(spec));
      metrics.put(spec.jobId(), new JobMetrics(getRuntimeContext().getMetricGroup(), spec.jobId()));
    }
    reconciled = new java.util.HashSet<>();
    clientKeys = new ClientKeys();
  }

  @Override
  public void processElement2(String jobId, Context ctx, Collector<OutboundRecord> out)
      throws Exception {
    ensureStarted(specs.get(jobId), ctx, out);
  }

  @Override
  public void processElement1(DecodedUpdate update, Context ctx, Collector<OutboundRecord> out)
      throws Exception {
    if (update.keepAlive) {
      JobProgress progress = progressState.value();
      if (progress != null && !progress.exhausted) {
        // Re-arms the open round's deadline (registering the same timer again is a no-op): a
        // drain fired it before its savepoint was taken, and the restored job must still close
        // that round.
        ctx.timerService().registerEventTimeTimer(closeTimer(progress));
      }
      return;
    }
    JobSpec spec = specs.get(update.jobId);
    JobProgress progress = ensureStarted(spec, ctx, out);
    JobMetrics jobMetrics = metrics.get(spec.jobId());
    if (progress.exhausted) {
      reject(
          spec,
          update,
          RejectReason.BUDGET_EXHAUSTED,
          "the job's privacy budget is spent; no more rounds run",
          out);
      return;
    }
    if (update.round < progress.currentRound) {
      reject(
          spec,
          update,
          RejectReason.STALE_ROUND,
          "round " + update.round + " is closed; round " + progress.currentRound + " is open",
          out);
      return;
    }
    if (update.round > progress.currentRound) {
      reject(
          spec,
          update,
          RejectReason.FUTURE_ROUND,
          "round " + update.round + " is not open yet; round " + progress.currentRound + " is open",
          out);
      return;
    }
    Long arrived = ctx.timestamp(); // the broker's LogAppendTime
    if (arrived != null && arrived >= progress.deadlineMillis) {
      reject(
          spec,
          update,
          RejectReason.STALE_ROUND,
          "arrived at "
              + arrived
              + ", after round "
              + update.round
              + "'s deadline "
              + progress.deadlineMillis,
          out);
      return;
    }
    OpenRound round = openRoundState.value().atCurrentScale();
    String clientKey = clientKeys.of(update.clientId);
    if (seenClients.contains(clientKey)
        || (round.legacyClientIds && seenClients.contains(update.clientId))) {
      reject(
          spec,
          update,
          RejectReason.DUPLICATE_CLIENT,
          "client " + update.clientId + " already sent an update for round " + update.round,
          out);
      return;
    }
    if (round.seen >= spec.rounds().maxClients()) {
      if (!round.turnedAway) {
        round.turnedAway = true;
        openRoundState.update(round);
      }
      reject(
          spec,
          update,
          RejectReason.ROUND_FULL,
          "round "
              + update.round
              + " already holds "
              + round.seen
              + " clients, the most one round takes; send in the next round",
          out);
      return;
    }
    // Remember the client even when sampling drops it, so a retry cannot buy a second draw.
    seenClients.put(clientKey, Boolean.TRUE);
    round.seen++;
    if (!sampled(spec, update)) {
      openRoundState.update(round);
      jobMetrics.updatesNotSampled.inc();
      return;
    }
    ClippedSum sum =
        ClippedSum.wrap(
            clippingPolicies.get(spec.jobId()),
            tensorSizes.get(spec.jobId()),
            round.units,
            round.contributions);
    long started = StageTimer.start();
    float[][] values = scratch.get(spec.jobId());
    update.readValues(values);
    ClipResult clip = sum.add(values);
    clipTime.stop(started);
    round.contributions = sum.contributions();
    round.clipped += clip.clipped() ? 1 : 0;
    openRoundState.update(round);
    jobMetrics.updatesAccepted.inc();
    if (clip.clipped()) {
      jobMetrics.updatesClipped.inc();
    }
    if (spec.rounds().closeEarly() && round.contributions >= spec.rounds().expectedClients()) {
      // Early close: the next round opens at the m-th update's broker time.
      long closedAt = arrived != null ? arrived : progress.deadlineMillis;
      ctx.timerService().deleteEventTimeTimer(closeTimer(progress));
      closeRound(spec, progress, round, closedAt, out);
      openNextRound(spec, progress, ctx, out, closedAt, 0);
      progressState.update(progress);
    }
  }

  /**
   * When a job starts or adopts the ledger topic's state, its round opens now: by the wall clock,
   * but never before the event time already reached, so the deadline lies ahead of the watermark.
   */
  private static long openingTime(Context ctx) {
    return Math.max(
        ctx.timerService().currentProcessingTime(), ctx.timerService().currentWatermark());
  }

  /**
   * Server-side Poisson sampling. The draw comes from the job's noise source for (job, round,
   * client): with a keyed source it is the same draw when a round is replayed after a failure.
   */
  private boolean sampled(JobSpec spec, DecodedUpdate update) {
    if (!spec.privacy().sampling().mode().equals("server-poisson")) {
      return true;
    }
    NoiseStream draw =
        noiseSources
            .get(spec.jobId())
            .forRound(spec.jobId() + "/sampling/" + update.clientId, update.round);
    return draw.nextUniform() < spec.privacy().sampling().rate();
  }

  /**
   * Rounds close on an event-time timer one millisecond before the deadline: once the watermark
   * passes it, every update the broker appended before the deadline has been processed.
   */
  private static long closeTimer(JobProgress progress) {
    return progress.deadlineMillis - 1;
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<OutboundRecord> out)
      throws Exception {
    JobProgress progress = progressState.value();
    JobSpec spec = specs.get(ctx.getCurrentKey());
    if (progress != null && reconcile(spec, progress, ctx, out)) {
      return; // restored state was behind the ledger topic: the job moved on to its rounds
    }
    // A deleted or superseded deadline can still fire; only the open round's deadline counts.
    if (progress == null || progress.exhausted || timestamp != closeTimer(progress)) {
      return;
    }
    // A drain (flink stop --drain, or the end of a bounded input) sends the maximum watermark and
    // fires every timer at once: real event time has not closed this round, so nothing is charged
    // or released. The drain's savepoint is taken after this and holds the round without its
    // timer; after a restore, the first heartbeat keep-alive re-arms it.
    if (ctx.timerService().currentWatermark() == Long.MAX_VALUE) {
      LOG.info(
          "job {}: drained at round {}; the round is neither closed nor charged",
          spec.jobId(),
          progress.currentRound);
      return;
    }
    // The next round opens at this round's deadline, not at the time the timer happens to fire,
    // so deadlines (and with them round membership) are the same in a replay.
    long deadline = progress.deadlineMillis;
    closeRound(spec, progress, openRoundState.value(), deadline, out);
    openNextRound(spec, progress, ctx, out, deadline, 0);
    progressState.update(progress);
  }

  /** First contact with a job: publish the initial model (round 0) and open round 1. */
  private JobProgress ensureStarted(JobSpec spec, Context ctx, Collector<OutboundRecord> out)
      throws Exception {
    JobProgress progress = progressState.value();
    if (progress != null) {
      reconcile(spec, progress, ctx, out);
      return progress; // already running (e.g. the start event replayed after a restore)
    }
    progress = new JobProgress();
    progress.model = spec.initialWeights();
    progress.ledger = LedgerCodec.write(PrivacyLedger.EMPTY);
    if (floor(spec).rounds() > 0 || floor(spec).exhausted()) {
      // The job id already spent budget in an earlier run whose state is gone: continue from the
      // ledger topic's spending and the latest released model instead of starting over.
      adopt(spec, progress, floor(spec), ctx, out);
    } else {
      out.collect(
          Records.model(spec, 0, progress.model, 0.0, noiseSources.get(spec.jobId()).kind()));
      openNextRound(spec, progress, ctx, out, openingTime(ctx), spec.rounds().startGraceMillis());
    }
    reconciled.add(spec.jobId());
    progressState.update(progress);
    return progress;
  }

  private LedgerFloor floor(JobSpec spec) {
    return floors.getOrDefault(spec.jobId(), LedgerFloor.NONE);
  }

  /**
   * Once per job after a restore: if the ledger topic shows more charged rounds than the restored
   * state (an older checkpoint or savepoint), adopt the topic's ledger so the budget is never
   * rolled back (DESIGN invariant 4). Returns true when it adopted.
   */
  private boolean reconcile(
      JobSpec spec, JobProgress progress, Context ctx, Collector<OutboundRecord> out)
      throws Exception {
    if (!reconciled.add(spec.jobId())) {
      return false;
    }
    LedgerFloor floor = floor(spec);
    boolean floorIsAhead = floor.rounds() > LedgerCodec.read(progress.ledger).totalCount();
    boolean floorIsExhausted = floor.exhausted() && !progress.exhausted;
    if (!floorIsAhead && !floorIsExhausted) {
      return false;
    }
    ctx.timerService().deleteEventTimeTimer(closeTimer(progress));
    adopt(spec, progress, floor, ctx, out);
    progressState.update(progress);
    return true;
  }

  private void adopt(
      JobSpec spec,
      JobProgress progress,
      LedgerFloor floor,
      Context ctx,
      Collector<OutboundRecord> out)
      throws Exception {
    clearRound();
    LOG.info(
        "job {}: adopting the ledger topic's spending ({} rounds charged, last round {}, model of"
            + " round {}{}) over state that showed {} rounds",
        spec.jobId(),
        floor.rounds(),
        floor.lastRound(),
        floor.modelRound(),
        floor.exhausted() ? ", budget spent" : "",
        LedgerCodec.read(progress.ledger).totalCount());
    progress.ledger = floor.ledger();
    progress.currentRound = Math.max(progress.currentRound, floor.lastRound());
    if (floor.model() != null && floor.modelRound() > progress.modelRound) {
      progress.model = floor.model().clone();
      progress.modelRound = floor.modelRound();
    }
    progress.exhausted = floor.exhausted();
    if (!progress.exhausted) {
      openNextRound(spec, progress, ctx, out, openingTime(ctx), spec.rounds().startGraceMillis());
    }
  }

  /**
   * Opens the next round if one more round fits the budget; otherwise marks the job exhausted.
   * {@code extraMillis} lengthens the round (round 1's start grace).
   */
  private void openNextRound(
      JobSpec spec,
      JobProgress progress,
      Context ctx,
      Collector<OutboundRecord> out,
      long opensAt,
      long extraMillis)
      throws Exception {
    long now = opensAt;
    progress.currentRound++;
    PrivacyLedger ledger = LedgerCodec.read(progress.ledger);
    Accountant accountant = Accountant.named(spec.privacy().accountant());
    PrivacyEvent next = spec.roundCharge().event(spec.privacy().noiseMultiplier(), 1);
    if (!BudgetStatus.fits(
        accountant, ledger, spec.privacy().budgetEpsilon(), spec.privacy().delta(), next)) {
      exhaust(spec, progress, ledger, now, out);
      return;
    }
    openRoundState.update(new OpenRound(spec.model().dimension()));
    progress.deadlineMillis = opensAt + spec.rounds().timeoutMillis() + extraMillis;
    ctx.timerService().registerEventTimeTimer(closeTimer(progress));
    out.collect(
        Records.announcement(
            spec, progress.currentRound, progress.modelRound, progress.deadlineMillis));
  }

  /** Charges the round, then releases it unless the noisy minimum-cohort rule says no. */
  private void closeRound(
      JobSpec spec, JobProgress progress, OpenRound round, long now, Collector<OutboundRecord> out)
      throws Exception {
    long r = progress.currentRound;
    JobMetrics jobMetrics = metrics.get(spec.jobId());
    jobMetrics.lastRound(round.contributions, round.clipped);
    jobMetrics.roundLatency(System.currentTimeMillis() - progress.deadlineMillis);
    PrivacyLedger ledger = LedgerCodec.read(progress.ledger);
    Accountant accountant = Accountant.named(spec.privacy().accountant());
    PrivacyEvent charge = spec.roundCharge().event(spec.privacy().noiseMultiplier(), 1);
    // Budget before release (invariant 4): checked again here, whatever was checked at opening.
    if (!BudgetStatus.fits(
        accountant, ledger, spec.privacy().budgetEpsilon(), spec.privacy().delta(), charge)) {
      exhaust(spec, progress, ledger, now, out);
      return;
    }
    ledger = ledger.append(charge);
    progress.ledger = LedgerCodec.write(ledger);
    double epsilon = accountant.epsilon(ledger, spec.privacy().delta()).epsilon();
    jobMetrics.epsilonSpent(epsilon);

    // One noise stream per (job, round): the count's noise is drawn first, then the sum's.
    NoiseStream noise =
        noiseSources.get(spec.jobId()).forRound(noiseStream(spec, round.atCurrentScale(), r), r);
    Double noisyCount = null;
    boolean release = true;
    if (spec.rounds().minimumCohort() > 0) {
      noisyCount =
          round.contributions + spec.rounds().minimumCohortNoiseStd() * noise.nextStandardNormal();
      release = noisyCount >= spec.rounds().minimumCohort();
    }
    if (release) {
      long started = StageTimer.start();
      double[] sum =
          ClippedSum.wrap(
                  clippingPolicies.get(spec.jobId()),
                  tensorSizes.get(spec.jobId()),
                  round.atCurrentScale().units,
                  round.contributions)
              .toDoubles();
      NoisyAverage.apply(
          progress.model,
          sum,
          spec.mechanism(),
          noise,
          spec.rounds().expectedClients(),
          spec.serverLearningRate());
      progress.modelRound = r;
      noiseTime.stop(started);
      started = StageTimer.start();
      OutboundRecord model =
          Records.model(spec, r, progress.model, epsilon, noiseSources.get(spec.jobId()).kind());
      encodeTime.stop(started);
      out.collect(model);
      out.collect(
          Records.ledger(
              spec,
              r,
              LedgerOutcome.RELEASED,
              charge,
              epsilon,
              round.contributions,
              noisyCount,
              now));
      jobMetrics.roundsReleased.inc();
      LOG.info(
          "job {}: round {} released; charged {} (z {}, q {}, {}); epsilon {} of {} at delta {}",
          spec.jobId(),
          r,
          charge.kind(),
          charge.noiseMultiplier(),
          charge.samplingRate(),
          spec.roundCharge().adjacency(),
          epsilon,
          spec.privacy().budgetEpsilon(),
          spec.privacy().delta());
    } else {
      out.collect(
          Records.ledger(
              spec,
              r,
              LedgerOutcome.NOT_RELEASED_MIN_COHORT,
              charge,
              epsilon,
              round.contributions,
              noisyCount,
              now));
      jobMetrics.roundsNotReleased.inc();
      LOG.info(
          "job {}: round {} not released (noisy count under the minimum cohort); charged, epsilon"
              + " {} of {}",
          spec.jobId(),
          r,
          epsilon,
          spec.privacy().budgetEpsilon());
    }
    clearRound();
  }

  /**
   * The name of a round's noise stream: the job id and a digest of the round's exact fixed-point
   * sum. A replay with the same members has the same sum and so the same release, bit for bit. A
   * recomputation that admitted other members (early close, a full round, or two updates under one
   * client id, where processing order across partitions decides) has another sum and gets other
   * noise: with one noise for both, the two releases' difference would be noise-free.
   */
  private String noiseStream(JobSpec spec, OpenRound round, long r) {
    if (round.turnedAway) {
      metrics.get(spec.jobId()).roundsFull.inc();
      LOG.warn(
          "job {}: round {} was full ({} clients); later clients were turned away (ROUND_FULL)",
          spec.jobId(),
          r,
          round.seen);
    }
    return spec.jobId() + "/sum/" + ClientKeys.sumDigest(round.units, round.contributions);
  }

  /** The budget cannot cover another round: record it once, stop announcing, drop round state. */
  private void exhaust(
      JobSpec spec,
      JobProgress progress,
      PrivacyLedger ledger,
      long now,
      Collector<OutboundRecord> out)
      throws Exception {
    progress.exhausted = true;
    double epsilon =
        Accountant.named(spec.privacy().accountant())
            .epsilon(ledger, spec.privacy().delta())
            .epsilon();
    LOG.warn(
        "job {}: privacy budget spent (epsilon {} of {}): round {} and later are refused",
        spec.jobId(),
        epsilon,
        spec.privacy().budgetEpsilon(),
        progress.currentRound);
    out.collect(
        Records.ledger(
            spec,
            progress.currentRound,
            LedgerOutcome.BUDGET_EXHAUSTED,
            null,
            epsilon,
            0,
            null,
            now));
    clearRound();
  }

  /** Round state is per round: cleared at every close so memory never grows with rounds. */
  private void clearRound() {
    openRoundState.clear();
    seenClients.clear();
  }

  private void reject(
      JobSpec spec,
      DecodedUpdate update,
      RejectReason reason,
      String detail,
      Collector<OutboundRecord> out) {
    metrics.get(spec.jobId()).rejected(reason);
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
}
