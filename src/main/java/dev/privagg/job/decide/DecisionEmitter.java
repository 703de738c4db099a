package dev.privagg.job.decide;

import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.SecureRound;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.ClosedRound;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.OpenRound;
import dev.privagg.job.OutboundRecord;
import dev.privagg.job.Records;
import dev.privagg.job.RoundSignal;
import dev.privagg.job.ShardCommand;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.nio.charset.StandardCharsets;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Turns the lifecycle's decisions for one event into records, timers, metrics and logs. */
final class DecisionEmitter implements RoundDecisions {
  private final JobSpec spec;
  private final JobMetrics metrics;
  private final String noiseKind;
  private final String deployment;
  private final TimerService timers;
  private final KeyedCoProcessFunction<String, DecodedUpdate, String, OutboundRecord>.Context ctx;
  private final Collector<OutboundRecord> out;

  private static final Logger LOG = LoggerFactory.getLogger(DecideFunction.class);

  DecisionEmitter(
      JobSpec spec,
      JobMetrics metrics,
      String noiseKind,
      String deployment,
      KeyedCoProcessFunction<String, DecodedUpdate, String, OutboundRecord>.Context ctx,
      Collector<OutboundRecord> out) {
    this.spec = spec;
    this.metrics = metrics;
    this.noiseKind = noiseKind;
    this.deployment = deployment;
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
    ctx.output(DecideFunction.ROUND_SIGNALS, RoundSignal.opened(spec.jobId(), round, clipNorm));
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
    ctx.output(DecideFunction.SHARD_COMMANDS, ShardCommand.admit(update, shardKey, clipNorm));
  }

  @Override
  public void leaveUnsampled(DecodedUpdate update) {
    metrics.updatesNotSampled.inc();
    drop(update);
  }

  @Override
  public void secureRound(SecureRound message) {
    out.collect(
        new OutboundRecord(
            spec.topics().secure(),
            spec.jobId().getBytes(StandardCharsets.UTF_8),
            AvroCodec.encode(message)));
  }

  @Override
  public void unmaskFailed(long round, long maskedInputs, String problem) {
    metrics.roundsNotUnmasked.inc();
    LOG.warn(
        "job {}: round {}'s {} masked inputs could not be unmasked ({}); the round is released"
            + " with noise alone",
        spec.jobId(),
        round,
        maskedInputs,
        problem);
  }

  // The unmask blocks asked for while handling this event, for the seal of their round.
  private final java.util.List<String> unmaskBlocks = new java.util.ArrayList<>();
  private long unmaskRound = -1;

  @Override
  public void unmask(UnmaskRequest request) {
    unmaskRound = request.round;
    unmaskBlocks.add(request.blockKey);
    ctx.output(DecideFunction.UNMASK_REQUESTS, request);
  }

  /** The update's shard holds its values until told: let them go. */
  private void drop(DecodedUpdate update) {
    if (update.shardKey != null && update.tensorData == null && update.carriesValues()) {
      ctx.output(DecideFunction.SHARD_COMMANDS, ShardCommand.drop(update));
    }
  }

  @Override
  public void reject(DecodedUpdate update, RejectReason reason, String detail) {
    metrics.rejected(reason);
    drop(update);
    writeReject(update, reason, detail);
  }

  /** Bytes were decoded upstream; the source position identifies the original record. */
  private void writeReject(DecodedUpdate update, RejectReason reason, String detail) {
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
  public void misbehaved(DecodedUpdate update, String detail) {
    metrics.secureClientsNamed.inc();
    LOG.warn(
        "job {}: round {}: client {} misbehaved in secure aggregation: {}",
        spec.jobId(),
        update.round,
        update.clientId,
        detail);
    writeReject(update, RejectReason.SECURE_PROTOCOL, "misbehaved: " + detail);
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
          DecideFunction.SHARD_COMMANDS,
          ShardCommand.seal(spec.jobId(), keys[i], round.round(), members.shardCounts[i]));
    }
    RoundSignal sealed = RoundSignal.sealed(round, release, baseModelRound, members, spec.jobId());
    if (!unmaskBlocks.isEmpty() && unmaskRound == round.round()) {
      // A secure round: the combiner also waits for the mask corrections asked for just now.
      int n = sealed.shards.length;
      sealed.shards = java.util.Arrays.copyOf(sealed.shards, n + unmaskBlocks.size());
      for (int i = 0; i < unmaskBlocks.size(); i++) {
        sealed.shards[n + i] = unmaskBlocks.get(i);
      }
      unmaskBlocks.clear();
    }
    sealed.carriedModel = carriedBase;
    ctx.output(DecideFunction.ROUND_SIGNALS, sealed);
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
      ctx.output(DecideFunction.SHARD_COMMANDS, ShardCommand.discard(spec.jobId(), key, round));
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
  public void exhaust(
      long round, long firstUnopened, long finalModelRound, double epsilonSpent, long atMillis) {
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
    out.collect(Records.budgetSpent(spec, firstUnopened, finalModelRound, deployment));
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
