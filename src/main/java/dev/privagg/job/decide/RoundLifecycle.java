package dev.privagg.job.decide;

import dev.privagg.avro.RejectReason;
import dev.privagg.job.ClosedRound;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.JobProgress;
import dev.privagg.job.OpenRound;
import dev.privagg.job.Participation;
import dev.privagg.job.Pipeline;
import dev.privagg.job.SecureUpdate;
import dev.privagg.job.combine.CombinedRounds;
import dev.privagg.job.combine.CorrelatedNoise;
import dev.privagg.job.combine.NoiseStreams;
import dev.privagg.job.decode.ClientKeys;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.ledger.RoundCharges;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.job.shard.ShardSums;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The rounds of one training job, without Flink: events in (job start, an update at its broker
 * timestamp, event time reaching a timer, a keep-alive), decisions out ({@link RoundDecisions}),
 * state through a {@link RoundStore}.
 *
 * <p>Membership is a pure function of the updates log (design.md invariants 8 and 10). An update is
 * not decided when it is read but held until event time reaches its broker timestamp
 * (LogAppendTime); event time only passes t once every partition has been read past t, so the
 * updates of one timestamp are then all present and are decided in (timestamp, partition, offset)
 * order:
 *
 * <ul>
 *   <li>Round r takes the updates claiming r whose timestamp lies in [open_r, deadline_r) and that
 *       are valid, not duplicates, not over {@code maxClients} and sampled. Among updates under one
 *       client id, and for the last free places of a full round, the first in that order wins.
 *   <li>An update claiming a round that has closed at its timestamp (at its deadline, or early) is
 *       STALE_ROUND; one claiming a round that has not opened yet at its timestamp (r + 1 stamped
 *       before r closed) is FUTURE_ROUND. After the budget is spent: BUDGET_EXHAUSTED.
 *   <li>Round r closes once event time reaches deadline_r - 1, or with {@code closeEarly} at the
 *       m-th admitted update, at that update's timestamp. Round r + 1 opens (and is announced) at
 *       deadline_r either way and ends {@code timeout} later, so the schedule never depends on the
 *       data (only a non-private spec's {@code nextRoundAtEarlyClose} opens it at the early close).
 *       Between an early close and the deadline, updates for r are STALE_ROUND and for r + 1
 *       FUTURE_ROUND. Event time that jumps over several deadlines closes each round in turn, the
 *       later ones with noise only.
 * </ul>
 *
 * <p>Bound on held updates: an update is held only until event time (the minimum over partitions)
 * reaches its timestamp, that is for the skew between the partitions' read positions plus at most
 * one heartbeat interval ({@link Pipeline#HEARTBEAT_MILLIS}) of a partition without traffic. So the
 * held updates are those appended in that window, whole (values included). A drain's maximum
 * watermark decides nothing: updates held then stay held in the savepoint, and the restored job
 * decides them in order when event time reaches them again (keep-alives re-arm their timers).
 *
 * <p>The lifecycle decides membership and charges; it never sees an update's values. An admitted
 * update is summed by its shard ({@link ShardSums}), and a closed round is summed up, noised and
 * released by the combiner ({@link CombinedRounds}).
 */
final class RoundLifecycle {
  // The job reads one updates topic: (partition, offset) is a record's place in it.
  private static final Comparator<DecodedUpdate> LOG_ORDER =
      Comparator.<DecodedUpdate>comparingInt(u -> u.sourcePartition)
          .thenComparingLong(u -> u.sourceOffset);

  private final JobSpec spec;
  private final NoiseSource noiseSource;
  private final LedgerFloor floor;
  private final RoundCharges charges;
  private final ShardPlan shards;
  private final ClientKeys clientKeys = new ClientKeys();
  // Whether the state was compared with the ledger topic's floor since this instance was made, that
  // is since the operator (re)started.
  private boolean reconciled;
  private final long runStartMillis;
  // Secure aggregation's phases (docs/secure-aggregation.md); null for a plaintext job.
  private final SecurePhases secure;

  /**
   * @param floor what the ledger and model topics already show for the job
   */
  RoundLifecycle(JobSpec spec, NoiseSource noiseSource, LedgerFloor floor) {
    this(spec, noiseSource, floor, Long.MAX_VALUE, new ShardPlan(1));
  }

  /**
   * @param runStartMillis when this run was submitted: a new job's round 1 opens then (or when the
   *     lifecycle starts, if earlier), so updates appended since the submission belong to it
   * @param shards where updates restored without a shard key (from an earlier version) are summed
   */
  RoundLifecycle(
      JobSpec spec,
      NoiseSource noiseSource,
      LedgerFloor floor,
      long runStartMillis,
      ShardPlan shards) {
    this.runStartMillis = runStartMillis;
    this.secure =
        spec.secureAggregation() ? new SecurePhases(spec, new java.security.SecureRandom()) : null;
    this.spec = spec;
    this.charges = new RoundCharges(spec);
    this.noiseSource = noiseSource;
    this.floor = floor;
    this.shards = shards;
  }

  /**
   * The job-start event (also the first contact through an update): publishes round 0 and opens
   * round 1, or continues from the ledger topic when the job id already spent budget. For a job
   * that already runs, it only reconciles once after a restore.
   *
   * @param nowMillis when a round opened now opens: the wall clock, never before event time
   */
  void start(RoundStore store, long nowMillis, RoundDecisions out) {
    JobProgress progress = store.progress();
    if (progress != null) {
      reconcile(store, progress, nowMillis, out);
      return; // already running (e.g. the start event replayed after a restore)
    }
    reconciled = true;
    store.saveMechanism(mechanism());
    progress = new JobProgress();
    progress.fixedSchedule = true;
    progress.ledger = LedgerCodec.write(PrivacyLedger.EMPTY);
    if (floor.hasHistory()) {
      refuseWithoutParticipations(floor.rounds(), 0);
      // An earlier run of the job id, whose state is gone, spent budget or announced rounds:
      // continue from the ledger topic's spending, after its last announced round, from the
      // latest released model, instead of starting over.
      adopt(store, progress, nowMillis, out);
    } else if (spec.rounds().startAtMillis() > nowMillis) {
      out.publishInitialModel(spec.initialWeights());
      // The operator's start time, fixed before any client exists: wait as after an early close,
      // with round 1 opening at that "deadline" and nothing announced or charged before.
      progress.closedEarly = true;
      progress.deadlineMillis = spec.rounds().startAtMillis();
      armCloseTimer(progress, out);
    } else {
      out.publishInitialModel(spec.initialWeights());
      // Round 1 opens at the submission, which the updates source reads from, or at the operator's
      // start time if that passed since; it lasts at least a timeout after the job is up.
      long opensAt = Math.max(Math.min(nowMillis, runStartMillis), spec.rounds().startAtMillis());
      openRound(
          store,
          progress,
          opensAt,
          Math.max(
              opensAt + spec.rounds().timeoutMillis() + spec.rounds().startGraceMillis(),
              nowMillis + spec.rounds().timeoutMillis()),
          out);
      armCloseTimer(progress, out);
    }
    store.saveProgress(progress);
  }

  /**
   * An update appended at broker time {@code timestamp}, read while event time stands at {@code
   * eventTime}: held until event time reaches its timestamp (see the class comment). One the event
   * time already passed (the broker's clock stepped back) cannot wait for its turn and is decided
   * at once, by the same rules against the round open now.
   */
  void arrive(
      RoundStore store,
      DecodedUpdate update,
      long timestamp,
      long eventTime,
      long nowMillis,
      RoundDecisions out) {
    start(store, nowMillis, out);
    if (timestamp <= eventTime) {
      decide(store, store.progress(), update, timestamp, out);
      return;
    }
    store.held().hold(timestamp, update);
    out.registerTimer(timestamp);
  }

  /**
   * Event time reached {@code time} (a timer fired): every update stamped up to {@code time} has
   * been read. Rounds due before {@code time} close, the updates held at {@code time} are decided
   * in log order, then rounds whose deadline is {@code time + 1} close.
   *
   * @param draining the maximum watermark of a drain ({@code flink stop --drain}, or the end of a
   *     bounded input), which is not real event time: nothing is decided, closed or charged
   */
  void eventTimeReached(
      RoundStore store, long time, boolean draining, long nowMillis, RoundDecisions out) {
    JobProgress progress = store.progress();
    if (progress == null) {
      return;
    }
    reconcile(store, progress, nowMillis, out);
    if (draining) {
      // The drain's savepoint is taken after this and holds the round and the held updates without
      // their timers; after a restore, the first heartbeat keep-alive re-arms them.
      if (!progress.exhausted && !progress.closedEarly && time == closeTimer(progress)) {
        out.drain(progress.currentRound);
      }
      return;
    }
    securePhasesDue(store, time - 1, out);
    closeDueRounds(store, progress, time - 1, out);
    List<DecodedUpdate> held = new ArrayList<>(store.held().take(time));
    held.sort(LOG_ORDER);
    for (DecodedUpdate update : held) {
      decide(store, progress, update, time, out);
    }
    securePhasesDue(store, time, out);
    closeDueRounds(store, progress, time, out);
  }

  /**
   * A heartbeat's keep-alive: re-arms the open round's deadline and the held updates' timers
   * (registering a timer again is a no-op). A drain fired them before its savepoint was taken, and
   * the restored job must still close that round and decide those updates.
   */
  void keepAlive(RoundStore store, RoundDecisions out) {
    JobProgress progress = store.progress();
    if (progress != null && !progress.exhausted) {
      armCloseTimer(progress, out);
      if (secure != null) {
        secure.rearm(store, out);
      }
    }
    for (long timestamp : store.held().timestamps()) {
      out.registerTimer(timestamp);
    }
  }

  /** Decides one update at its broker time, against the round open at that time. */
  private void decide(
      RoundStore store, JobProgress progress, DecodedUpdate update, long time, RoundDecisions out) {
    if ((update instanceof SecureUpdate) != (secure != null)) {
      // Held across a restore that switched aggregation.mode: the validator refuses such records
      // now, and neither the phases nor the shards could take one (a masked input is not an
      // update, nor an update a masked input).
      out.reject(
          update,
          RejectReason.WRONG_AGGREGATION,
          "job '"
              + spec.jobId()
              + "' was restored with aggregation.mode "
              + (secure != null ? "secure" : "plaintext")
              + " while this record waited for its broker time");
      return;
    }
    if (progress.exhausted) {
      out.reject(
          update,
          RejectReason.BUDGET_EXHAUSTED,
          "the job's privacy budget is spent; no more rounds run");
      return;
    }
    long open = progress.currentRound;
    if (progress.closedEarly && open == 0) {
      out.reject(
          update,
          RejectReason.FUTURE_ROUND,
          "the job's rounds start at "
              + java.time.Instant.ofEpochMilli(progress.deadlineMillis)
              + " (rounds.startAt); round 1 opens then");
      return;
    }
    if (progress.closedEarly && update.round <= open + 1) {
      out.reject(
          update,
          update.round <= open ? RejectReason.STALE_ROUND : RejectReason.FUTURE_ROUND,
          "round "
              + open
              + " closed early with its expected updates before "
              + time
              + ", the update's broker time; round "
              + (open + 1)
              + " opens at its deadline "
              + progress.deadlineMillis);
      return;
    }
    if (update.round < open) {
      out.reject(
          update,
          RejectReason.STALE_ROUND,
          "round "
              + update.round
              + " was closed at "
              + time
              + ", the update's broker time; round "
              + open
              + " was open");
      return;
    }
    if (update.round > open) {
      out.reject(
          update,
          RejectReason.FUTURE_ROUND,
          "round "
              + update.round
              + " was not open yet at "
              + time
              + ", the update's broker time; round "
              + open
              + " was open");
      return;
    }
    if (time < progress.openedMillis) {
      out.reject(
          update,
          RejectReason.FUTURE_ROUND,
          "round "
              + update.round
              + " opened at "
              + progress.openedMillis
              + ", after the update's broker time "
              + time);
      return;
    }
    OpenRound round = store.openRound().atCurrentScale();
    // Decoded updates carry their key (hashed in parallel); ones held by an earlier version do not.
    String clientKey = update.clientKey != null ? update.clientKey : clientKeys.of(update.clientId);
    SecureUpdate message = update instanceof SecureUpdate m ? m : null;
    if (message != null) {
      if (!secure.inWindow(store, message, time, out)) {
        return;
      }
      if (message.phase != SecureUpdate.ADVERTISE) {
        // Phases 2 to 6: the roster was fixed by the admission of phase 1's keys.
        if (secure.take(store, message, clientKey, out)) {
          String shard =
              update.shardKey != null ? update.shardKey : shards.keyFor(spec.jobId(), clientKey);
          round.admit(shard);
          store.saveOpenRound(round);
          out.admit(update, shard, clipNorm(progress, round));
        }
        return;
      }
    }
    if (!inRoundsGroup(clientKey, update, out)) {
      return;
    }
    SeenClients seen = store.seenClients();
    if (seen.contains(clientKey) || (round.legacyClientIds && seen.contains(update.clientId))) {
      out.reject(
          update,
          RejectReason.DUPLICATE_CLIENT,
          "client " + update.clientId + " already sent an update for round " + update.round);
      return;
    }
    Participation participation = null;
    if (spec.correlated()) {
      participation = store.participations().get(clientKey);
      if (!mayParticipate(participation, update, out)) {
        return;
      }
    }
    // A reproducible draw is a function of (job, round, client): a retry draws the same, so a
    // client the draw drops needs neither a place among the seen nor the round's capacity, and a
    // population larger than planned fills the cap only with sampled clients.
    boolean drawFirst = noiseSource.reproducible();
    if (drawFirst && !sampled(update)) {
      out.leaveUnsampled(update);
      return;
    }
    if (round.seen >= spec.rounds().maxClients()) {
      if (!round.turnedAway) {
        round.turnedAway = true;
        store.saveOpenRound(round);
      }
      out.reject(
          update,
          RejectReason.ROUND_FULL,
          "round "
              + update.round
              + " already holds "
              + round.seen
              + " clients, the most one round takes; send in the next round");
      return;
    }
    // A fresh draw each time: remember the client even when sampling drops it, so a retry cannot
    // buy a second draw.
    seen.add(clientKey);
    round.seen++;
    if (!drawFirst && !sampled(update)) {
      store.saveOpenRound(round);
      out.leaveUnsampled(update);
      return;
    }
    String shard =
        update.shardKey != null ? update.shardKey : shards.keyFor(spec.jobId(), clientKey);
    if (message != null) {
      // Admitted to the roster: its masked input, if it comes, is what its shard sums.
      store.saveOpenRound(round);
      recordParticipation(store, participation, clientKey, update.round);
      secure.join(store, message, clientKey, shard);
      return;
    }
    round.admit(shard);
    double clipNorm = clipNorm(progress, round);
    if (update.norm != null && update.norm <= clipNorm) {
      round.unclipped++;
    }
    store.saveOpenRound(round);
    recordParticipation(store, participation, clientKey, update.round);
    out.admit(update, shard, clipNorm);
    if (spec.rounds().closeEarly() && round.contributions >= spec.rounds().expectedClients()) {
      closeEarly(store, progress, round, time, out);
    }
  }

  private void recordParticipation(
      RoundStore store, Participation participation, String clientKey, long round) {
    if (spec.correlated()) {
      store
          .participations()
          .put(
              clientKey,
              new Participation(participation == null ? 1 : participation.count + 1, round));
    }
  }

  private void securePhasesDue(RoundStore store, long eventTime, RoundDecisions out) {
    if (secure != null) {
      secure.phasesDue(store, eventTime, out);
    }
  }

  /**
   * Amplified banded MF's cyclic groups: a client takes part only in its group's rounds, those with
   * (round - 1) mod b equal to its group, which a keyed draw on its key fixes for the deployment
   * (the client cannot pick it). Others are turned away before they count against the round's
   * capacity or are remembered as seen.
   */
  private boolean inRoundsGroup(String clientKey, DecodedUpdate update, RoundDecisions out) {
    JobSpec.Correlated c = spec.privacy().correlated();
    if (c == null || !c.banded()) {
      return true;
    }
    int bands = c.minSeparation();
    int group = ClientGroups.groupOf(noiseSource, spec, clientKey, bands);
    int roundsGroup = (int) Math.floorMod(update.round - 1, (long) bands);
    if (group == roundsGroup) {
      return true;
    }
    long next = update.round + Math.floorMod(group - roundsGroup, bands);
    out.reject(
        update,
        RejectReason.NOT_IN_GROUP,
        "client "
            + update.clientId
            + " is in group "
            + group
            + " of "
            + bands
            + " and takes part only in rounds r with (r - 1) mod "
            + bands
            + " = "
            + group
            + "; its next is round "
            + next);
    return false;
  }

  /**
   * The participation schema of correlated noise (design.md invariant 11): a client contributes at
   * most maxParticipations times, each round at least minSeparation after its previous one.
   */
  private boolean mayParticipate(
      Participation participation, DecodedUpdate update, RoundDecisions out) {
    if (participation == null) {
      return true;
    }
    JobSpec.Correlated schema = spec.privacy().correlated();
    if (participation.count >= schema.maxParticipations()) {
      out.reject(
          update,
          RejectReason.PARTICIPATION_LIMIT,
          "client "
              + update.clientId
              + " already contributed to "
              + participation.count
              + " rounds, the most this job's participation schema allows");
      return false;
    }
    if (update.round - participation.lastRound < schema.minSeparation()) {
      out.reject(
          update,
          RejectReason.TOO_SOON,
          "client "
              + update.clientId
              + " contributed to round "
              + participation.lastRound
              + "; its next round may be "
              + (participation.lastRound + schema.minSeparation())
              + " or later (minimum separation "
              + schema.minSeparation()
              + ")");
      return false;
    }
    return true;
  }

  /**
   * Closes the round at its m-th update and releases it now. The next round still opens at this
   * round's deadline (its close timer stays armed): opening it at the m-th update's time would let
   * one client's timing move every later window, and with it which later updates count
   * (docs/design.md, "Early close"). Only a non-private spec may chain rounds at the early close.
   */
  private void closeEarly(
      RoundStore store, JobProgress progress, OpenRound round, long time, RoundDecisions out) {
    if (spec.rounds().nextRoundAtEarlyClose()) {
      deleteCloseTimer(store, progress, out);
      closeRound(store, progress, round, time, out);
      if (!progress.exhausted) {
        progress.fixedSchedule = false; // a later private spec must re-anchor
        openNextRound(store, progress, time, 0, out);
        armCloseTimer(progress, out);
      }
    } else {
      closeRound(store, progress, round, time, out);
      if (!progress.exhausted) {
        progress.closedEarly = true;
        waitForReanchor(progress);
        armCloseTimer(progress, out);
      }
    }
    store.saveProgress(progress);
  }

  /**
   * For a closed round of state whose windows an earlier version's early close may have moved
   * ({@link JobProgress#fixedSchedule} false): the next round opens at the re-anchor time chosen at
   * the restore ({@link #reanchor}), never at the (possibly moved) deadline. Returns whether the
   * next opening waits for it: the round then stays closed (as after an early close) until that
   * time.
   */
  private boolean waitForReanchor(JobProgress progress) {
    if (progress.fixedSchedule || progress.reanchorMillis <= progress.deadlineMillis) {
      return false;
    }
    progress.closedEarly = true;
    progress.deadlineMillis = progress.reanchorMillis;
    return true;
  }

  /**
   * Server-side Poisson sampling. The draw comes from the job's noise source for (job, round,
   * client): with a keyed source it is the same draw when a round is replayed after a failure.
   */
  private boolean sampled(DecodedUpdate update) {
    if (!spec.privacy().sampling().mode().equals("server-poisson")) {
      return true;
    }
    NoiseStream draw =
        noiseSource.forRound(NoiseStreams.sampling(spec, update.clientId), update.round);
    return draw.nextUniform() < spec.privacy().sampling().rate();
  }

  /**
   * Closes every round whose deadline event time {@code eventTime} has reached: each opens the next
   * at its deadline, not at the time event time happens to get there, so deadlines (and with them
   * round membership) are the same in a replay.
   */
  private void closeDueRounds(
      RoundStore store, JobProgress progress, long eventTime, RoundDecisions out) {
    boolean closed = false;
    while (!progress.exhausted && closeTimer(progress) <= eventTime) {
      long deadline = progress.deadlineMillis;
      if (progress.closedEarly) {
        progress.closedEarly = false; // released at its m-th update already
      } else {
        closeRound(store, progress, store.openRound(), deadline, out);
      }
      closed = true;
      if (!progress.exhausted && !waitForReanchor(progress)) {
        // Round 1 after a scheduled start (rounds.startAt) gets the start grace, as at a start.
        long extraMillis = progress.currentRound == 0 ? spec.rounds().startGraceMillis() : 0;
        if (!progress.fixedSchedule && progress.reanchorMillis > 0) {
          // The re-anchored round opens at the restore time, announced with the restored job's
          // first checkpoint: the start grace, as for a new job's first round.
          progress.fixedSchedule = true;
          progress.reanchorMillis = 0;
          extraMillis = spec.rounds().startGraceMillis();
        }
        openNextRound(store, progress, deadline, extraMillis, out);
      }
    }
    if (closed) {
      armCloseTimer(progress, out);
      store.saveProgress(progress);
    }
  }

  /**
   * Rounds close on an event-time timer one millisecond before the deadline: once event time
   * reaches it, every update the broker appended before the deadline has been decided.
   */
  private static long closeTimer(JobProgress progress) {
    return progress.deadlineMillis - 1;
  }

  private static void armCloseTimer(JobProgress progress, RoundDecisions out) {
    if (!progress.exhausted) {
      out.registerTimer(closeTimer(progress));
    }
  }

  /** Deletes the open round's deadline timer, unless held updates still wait on that timestamp. */
  private static void deleteCloseTimer(RoundStore store, JobProgress progress, RoundDecisions out) {
    if (!store.held().holdsAt(closeTimer(progress))) {
      out.deleteTimer(closeTimer(progress));
    }
  }

  /**
   * Once per start of this instance: if the ledger topic shows more charged rounds than the
   * restored state (an older checkpoint or savepoint), or a later round number as announced, adopt
   * the topic's ledger so the budget is never rolled back (design.md invariant 4) and no public
   * round number is announced again.
   */
  private void reconcile(
      RoundStore store, JobProgress progress, long nowMillis, RoundDecisions out) {
    if (reconciled) {
      return;
    }
    reconciled = true;
    requireSameMechanism(store, progress);
    boolean floorIsAhead = floor.rounds() > LedgerCodec.read(progress.ledger).totalCount();
    boolean floorIsExhausted = floor.exhausted() && !progress.exhausted;
    // A later round number is public (a fresh start after this state was saved announced it):
    // going on from the state would announce that number again with another deadline.
    boolean floorIsLater = floor.lastRound() > progress.currentRound;
    if (floorIsAhead) {
      refuseWithoutParticipations(floor.rounds(), LedgerCodec.read(progress.ledger).totalCount());
    }
    if (floorIsAhead || floorIsExhausted || floorIsLater) {
      deleteCloseTimer(store, progress, out);
      adopt(store, progress, nowMillis, out);
    }
    reanchor(store, progress, nowMillis, out);
    rescheduleStart(store, progress, nowMillis, out);
    store.saveProgress(progress);
  }

  /**
   * A state still waiting for its scheduled start (nothing announced or charged yet) takes the
   * spec's start time as it is now: a changed {@code rounds.startAt}, or none, or one that passed
   * while the job was down, which opens round 1 now rather than in the past (its windows would have
   * closed before any client could see them, and been charged).
   */
  private void rescheduleStart(
      RoundStore store, JobProgress progress, long nowMillis, RoundDecisions out) {
    if (progress.currentRound != 0 || !progress.closedEarly || progress.exhausted) {
      return;
    }
    long opensAt = Math.max(spec.rounds().startAtMillis(), nowMillis);
    if (opensAt != progress.deadlineMillis) {
      deleteCloseTimer(store, progress, out);
      progress.deadlineMillis = opensAt;
      armCloseTimer(progress, out);
    }
  }

  /**
   * Correlated noise keeps what the next rounds depend on in this operator's state only: a BLT's
   * participation schema (who contributed when) and either mechanism's noise buffers (the earlier
   * rounds' C^-1 Z). A start that would take over rounds charged after that state (a fresh submit
   * over an earlier run's ledger, or an older savepoint) would let those rounds' clients in again
   * past their limits, or release noise the charges do not cover. Such a start is refused; the job
   * continues from its latest checkpoint or savepoint.
   */
  private void refuseWithoutParticipations(long chargedOnTopics, long chargedInState) {
    if (spec.correlated() && chargedOnTopics > chargedInState) {
      boolean banded = spec.privacy().correlated().banded();
      throw new ParticipationsLostException(
          "job "
              + spec.jobId()
              + " uses correlated noise (privacy.mechanism: "
              + (banded ? "bandmf" : "blt")
              + "), whose "
              + (banded ? "noise buffers are" : "participation limits and noise buffers are")
              + " kept in the job's state: the ledger topic shows "
              + chargedOnTopics
              + " charged rounds but the state "
              + (chargedInState == 0 ? "is empty (a fresh submit)" : "holds " + chargedInState)
              + (banded
                  ? ", so nothing shows that the next rounds' noise continues the banded noise"
                      + " those charges cover."
                  : ", so the clients of the rounds in between could contribute again past their"
                      + " limits.")
              + " Restore the job from its latest checkpoint or savepoint"
              + " (--from-savepoint), or give a new training job another jobId");
    }
  }

  /** What a job with independent noise records as its mechanism. */
  static final String INDEPENDENT = "independent";

  /** This spec's mechanism, as the state records it. */
  private String mechanism() {
    return spec.correlated() ? CorrelatedNoise.describe(spec, noiseSource) : INDEPENDENT;
  }

  /**
   * A restore may not switch a training job to, from or between correlated-noise mechanisms: its
   * ledger holds increments of one BLT's Gaussian, and its noise blocks' buffers one BLT's Z; under
   * another mechanism (another BLT, z, C, schema, block count or noise source; or independent
   * rounds before) the noise released next would not be what the charges cover. State from before
   * the mechanism was kept counts as independent once it charged a round.
   */
  private void requireSameMechanism(RoundStore store, JobProgress progress) {
    String ours = mechanism();
    String stored = store.mechanism();
    if (stored == null && LedgerCodec.read(progress.ledger).totalCount() > 0) {
      stored = INDEPENDENT;
    }
    if (stored != null
        && !stored.equals(ours)
        && (spec.correlated() || !stored.equals(INDEPENDENT))) {
      throw new MechanismChangedException(
          "job "
              + spec.jobId()
              + ": its rounds were charged under "
              + stored
              + ", but this spec asks for "
              + ours
              + "; a training job cannot switch to, from or between correlated-noise mechanisms"
              + " mid-run (the next release's noise would not be what the ledger charges):"
              + " restore with the spec it started with, or give a new training job another jobId"
              + (stored.startsWith("bandmf(")
                  ? ". If this is that spec and it now plans another strategy (the planner of"
                      + " another privagg version, or another machine's floating point), pin what"
                      + " the state records: privacy.bandmf.coefficients and bands as recorded,"
                      + " privacy.noiseMultiplier as recorded and no targetEpsilon"
                  : ""));
    }
    store.saveMechanism(ours);
  }

  /** A restore under another correlated-noise mechanism: the job must not run. */
  static final class MechanismChangedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    MechanismChangedException(String message) {
      super(message);
    }
  }

  /** A start that would lose the participation schema's counts: the job must not run. */
  static final class ParticipationsLostException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    ParticipationsLostException(String message) {
      super(message);
    }
  }

  /**
   * Re-anchors state from a version whose early close opened the next round at once ({@link
   * JobProgress#fixedSchedule} false): one client's timing may have moved its windows, and every
   * later round would inherit the shift. The open round therefore ends at the restore time {@code
   * nowMillis} at the latest, and the next round opens at that time (with the start grace) in every
   * world, whatever the moved deadline; an open round whose deadline passed while the job was down
   * waits closed until then. Done once: a failover keeps the time chosen.
   */
  private void reanchor(
      RoundStore store, JobProgress progress, long nowMillis, RoundDecisions out) {
    if (progress.fixedSchedule
        || progress.reanchorMillis != 0
        || progress.exhausted
        || spec.rounds().nextRoundAtEarlyClose()) {
      return; // fixed, chosen already, or nothing to protect
    }
    progress.reanchorMillis = nowMillis;
    if (progress.deadlineMillis > nowMillis) {
      deleteCloseTimer(store, progress, out);
      progress.deadlineMillis = nowMillis;
    }
    armCloseTimer(progress, out);
  }

  /**
   * Continues from the ledger and releases topics. Every round number an earlier run may have
   * announced stays taken: the latest announced round is taken over with its announced window (same
   * deadline, so the same members and, with keyed noise, the same release) while its deadline is
   * ahead; announced rounds that cannot be taken over are charged as SKIPPED, because a run still
   * alive may release them. So the rounds charged always equal the round number.
   */
  private void adopt(RoundStore store, JobProgress progress, long nowMillis, RoundDecisions out) {
    out.adopt(floor, LedgerCodec.read(progress.ledger).totalCount());
    if (holdsTheOpenAnnouncement(store, progress)) {
      // A restored state already holds the announced round with its window, and the members it
      // admitted before the savepoint (the restored source reads on after them): keep the round,
      // and take only the topic's spending.
      progress.ledger = floor.ledger();
      armCloseTimer(progress, out);
      return;
    }
    discardOpenRound(store, progress, out);
    progress.closedEarly = false; // what follows opens a round or exhausts the budget
    // What follows sets the schedule anew: a window of this version taken over, or one opened now.
    progress.fixedSchedule = true;
    progress.reanchorMillis = 0;
    long lastAnnounced = Math.max(progress.currentRound, floor.lastRound());
    progress.ledger = floor.ledger();
    progress.currentRound = floor.chargedThrough();
    // At an equal round the floor's model is the public one (a fresh start's initial weights may
    // come from a changed init; round 0 is already public).
    // The combiner takes the model from the topic when its state holds another round's.
    if (floor.model() != null && floor.modelRound() >= progress.modelRound) {
      progress.modelRound = floor.modelRound();
    }
    progress.model = null;
    progress.exhausted = floor.exhausted();
    // Adaptive clipping's C after the floor's last charged round, as its ledger entry says; 0 (the
    // spec's first C) when that round clipped at a fixed C, never an older run's value.
    progress.clipNorm = floor.nextClipNorm();
    LedgerFloor.Announced open = floor.openAnnouncement();
    // A round another run announced under other privacy parameters (a changed spec, or a second
    // job) may be released at that run's cost: it is charged at that cost too. Correlated noise
    // charges every round differently; it never gets here over charged rounds (its participation
    // counts would be lost, see refuseWithoutParticipations).
    PrivacyEvent sameAsOurs = spec.correlated() ? null : chargeOf(floor.lastRound());
    PrivacyEvent theirs =
        sameAsOurs != null && floor.lastCharge() != null && !floor.lastCharge().equals(sameAsOurs)
            ? floor.lastCharge()
            : null;
    while (!progress.exhausted && progress.currentRound < lastAnnounced) {
      long round = progress.currentRound + 1;
      if (theirs != null) {
        chargeSkipped(store, progress, round, theirs, nowMillis, out);
      }
      // Only a window of this version's fixed schedule is taken over: an earlier version's may
      // have been moved by its early close, so that round is charged as skipped instead.
      if (!progress.exhausted
          && open != null
          && open.fixedSchedule()
          && open.round() == lastAnnounced
          && round == lastAnnounced
          && open.deadlineMillis() > nowMillis) {
        openRound(store, progress, open.openedMillis(), open.deadlineMillis(), out);
        armCloseTimer(progress, out);
        return;
      }
      if (!progress.exhausted) {
        chargeSkipped(store, progress, round, chargeOf(round), nowMillis, out);
        progress.currentRound = round;
      }
    }
    if (progress.exhausted) {
      return;
    }
    LedgerFloor.Announced last = floor.announced();
    if (last != null
        && last.fixedSchedule()
        && last.round() == progress.currentRound
        && last.deadlineMillis() > nowMillis) {
      // The last announced round is charged before its deadline: it closed early. The next round
      // opens at that deadline as it would have without the restart, else whether a round closed
      // early (which depends on its members) would move the next window.
      progress.closedEarly = true;
      progress.openedMillis = last.openedMillis();
      progress.deadlineMillis = last.deadlineMillis();
    } else {
      // Opening now: a window chosen by this start, whatever came before.
      openNextRound(store, progress, nowMillis, spec.rounds().startGraceMillis(), out);
    }
    armCloseTimer(progress, out);
  }

  private boolean holdsTheOpenAnnouncement(RoundStore store, JobProgress progress) {
    LedgerFloor.Announced open = floor.openAnnouncement();
    return open != null
        && !progress.exhausted
        && !floor.exhausted()
        && store.openRound() != null
        && progress.currentRound == open.round()
        && progress.openedMillis == open.openedMillis()
        && progress.deadlineMillis == open.deadlineMillis()
        && floor.lastRound() == open.round();
  }

  /**
   * Charges {@code round} with {@code charge} as SKIPPED, or exhausts the budget (at that round) if
   * it does not fit.
   */
  private void chargeSkipped(
      RoundStore store,
      JobProgress progress,
      long round,
      PrivacyEvent charge,
      long nowMillis,
      RoundDecisions out) {
    PrivacyLedger ledger = LedgerCodec.read(progress.ledger);
    if (charge == null || !fits(ledger, charge)) {
      progress.currentRound = round;
      exhaust(store, progress, ledger, true, nowMillis, out);
      return;
    }
    ledger = ledger.append(charge);
    progress.ledger = LedgerCodec.write(ledger);
    out.skip(
        round,
        charge,
        accountant().epsilon(ledger, spec.privacy().delta()).epsilon(),
        clipNorm(progress),
        nowMillis);
  }

  /**
   * Opens the next round at {@code opensAt} if one more round fits the budget; otherwise marks the
   * job exhausted. {@code extraMillis} lengthens the round (the start grace).
   */
  private void openNextRound(
      RoundStore store, JobProgress progress, long opensAt, long extraMillis, RoundDecisions out) {
    openRound(store, progress, opensAt, opensAt + spec.rounds().timeoutMillis() + extraMillis, out);
  }

  /** Opens round currentRound + 1 for [opensAt, deadline) if it fits the budget. */
  private void openRound(
      RoundStore store, JobProgress progress, long opensAt, long deadline, RoundDecisions out) {
    progress.currentRound++;
    PrivacyLedger ledger = LedgerCodec.read(progress.ledger);
    PrivacyEvent next = chargeOf(progress.currentRound);
    if (next == null || !fits(ledger, next)) {
      exhaust(store, progress, ledger, false, opensAt, out);
      return;
    }
    OpenRound round = OpenRound.empty();
    round.clipNorm = clipNorm(progress);
    round.samplingRate = spec.roundCharge().samplingRate();
    store.saveOpenRound(round);
    progress.openedMillis = opensAt;
    progress.deadlineMillis = deadline;
    out.announce(progress.currentRound, progress.modelRound, opensAt, deadline, round.clipNorm);
    if (secure != null) {
      secure.open(store, progress.currentRound, opensAt, deadline, round.clipNorm, out);
    }
  }

  /**
   * The C of the open round {@code round}: the one it was announced with, so that its members, its
   * units, its noise and its ledger entry share one C even when a restore changed the spec.
   */
  private double clipNorm(JobProgress progress, OpenRound round) {
    return round != null && round.clipNorm > 0 ? round.clipNorm : clipNorm(progress);
  }

  /**
   * The open round's C: adaptive clipping's, set when the previous round closed, or the spec's
   * (also in state from versions without adaptive clipping, which holds 0).
   */
  private double clipNorm(JobProgress progress) {
    AdaptiveClipping adaptive = spec.privacy().adaptiveClipping();
    if (adaptive == null || !(progress.clipNorm > 0)) {
      return spec.privacy().clipNorm();
    }
    // A C from the ledger or from state kept under another spec stays within this spec's range.
    return Math.min(adaptive.maxClipNorm(), Math.max(adaptive.minClipNorm(), progress.clipNorm));
  }

  /** What round {@code round} costs when it opens; null past a planned run. */
  private PrivacyEvent chargeOf(long round) {
    return charges.of(round);
  }

  /**
   * What the open round {@code round} costs at its close: as {@link #chargeOf(long)}, but at least
   * at the sampling rate it was opened with, since members admitted before a restore were selected
   * under it (BLT runs sample no one).
   */
  private PrivacyEvent chargeOf(long r, OpenRound round) {
    if (spec.correlated() || !(round.samplingRate > spec.roundCharge().samplingRate())) {
      return chargeOf(r);
    }
    return spec.roundCharge()
        .atLeastSamplingRate(round.samplingRate)
        .event(spec.privacy().noiseMultiplier(), 1);
  }

  private boolean fits(PrivacyLedger ledger, PrivacyEvent next) {
    return charges.fits(ledger, next);
  }

  private Accountant accountant() {
    return Accountant.named(spec.privacy().accountant());
  }

  /** Charges the round, then releases it unless the noisy minimum-cohort rule says no. */
  private void closeRound(
      RoundStore store, JobProgress progress, OpenRound round, long closedAt, RoundDecisions out) {
    long r = progress.currentRound;
    PrivacyLedger ledger = LedgerCodec.read(progress.ledger);
    PrivacyEvent charge = chargeOf(r, round);
    // Budget before release (invariant 4): checked again here, whatever was checked at opening.
    if (charge == null || !fits(ledger, charge)) {
      exhaust(store, progress, ledger, true, closedAt, out);
      return;
    }
    ledger = ledger.append(charge);
    progress.ledger = LedgerCodec.write(ledger);
    double epsilon = accountant().epsilon(ledger, spec.privacy().delta()).epsilon();
    round.atCurrentScale();
    // Each count has its own noise stream per (job, round), apart from the sum's (NoiseStreams).
    // In secure mode the count is of masked inputs, and a round it withholds is not unmasked:
    // whether unmasking is attempted at all is this noisy, charged decision (design.md 12).
    Double noisyCount = null;
    boolean release = true;
    if (spec.rounds().minimumCohort() > 0) {
      NoiseStream noise = noiseSource.forRound(NoiseStreams.minimumCohort(spec), r);
      noisyCount =
          round.contributions + spec.rounds().minimumCohortNoiseStd() * noise.nextStandardNormal();
      release = noisyCount >= spec.rounds().minimumCohort();
    }
    if (secure == null) {
      SecurePhases.closeUnderPlaintext(store, round, out);
    } else if (release) {
      secure.unmask(store, round, closedAt, shards, out);
    }
    if (round.turnedAway) {
      out.reportFull(r, round.seen);
    }
    double clipNorm = clipNorm(progress, round);
    ClosedRound.Clipping clipping = new ClosedRound.Clipping(clipNorm, null, null);
    AdaptiveClipping adaptive = spec.privacy().adaptiveClipping();
    if (adaptive != null) {
      // Andrew et al. 2021, Alg. 1: the noisy fraction of unclipped updates, charged with the sum,
      // sets the next round's C, which is then public and the same in a replay.
      double fraction =
          adaptive.noisyUnclippedFraction(
              round.unclipped,
              round.contributions,
              noiseSource.forRound(NoiseStreams.unclippedCount(spec), r).nextStandardNormal(),
              spec.rounds().expectedClients());
      progress.clipNorm = adaptive.nextClipNorm(clipNorm, fraction);
      clipping = new ClosedRound.Clipping(clipNorm, fraction, progress.clipNorm);
    }
    ClosedRound closed =
        new ClosedRound(
            r,
            charge,
            ledger,
            epsilon,
            round.contributions,
            noisyCount,
            clipping,
            closedAt,
            progress.deadlineMillis);
    if (release) {
      // State from versions before the combiner kept the released model here: hand it over once,
      // since the combiner's state is empty after the upgrade and the topics may lag behind it.
      float[] carriedBase = progress.model;
      progress.model = null;
      out.release(closed, progress.modelRound, round, carriedBase);
      progress.modelRound = r;
    } else {
      out.withhold(closed, round);
    }
    store.clearRound();
  }

  /**
   * The budget cannot cover another round: record it once, say so publicly, stop announcing, drop
   * round state. {@code announced}: the current round was announced before its charge failed.
   */
  private void exhaust(
      RoundStore store,
      JobProgress progress,
      PrivacyLedger ledger,
      boolean announced,
      long atMillis,
      RoundDecisions out) {
    progress.exhausted = true;
    double epsilon = accountant().epsilon(ledger, spec.privacy().delta()).epsilon();
    // Never a number that is public already: an earlier run may have announced rounds up to the
    // floor's last one (a take-over or skipped rounds that the budget then refuses).
    long firstUnopened =
        Math.max(progress.currentRound + (announced ? 1 : 0), floor.lastRound() + 1);
    out.exhaust(progress.currentRound, firstUnopened, progress.modelRound, epsilon, atMillis);
    discardOpenRound(store, progress, out);
  }

  /** Drops the open round uncharged: its shards let go of what they summed for it. */
  private static void discardOpenRound(RoundStore store, JobProgress progress, RoundDecisions out) {
    OpenRound round = store.openRound();
    if (round != null && round.shardKeys != null) {
      out.discard(progress.currentRound, round);
    }
    store.clearRound();
  }
}
