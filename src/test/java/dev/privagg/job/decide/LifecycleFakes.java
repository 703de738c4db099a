package dev.privagg.job.decide;

import dev.privagg.avro.RejectReason;
import dev.privagg.job.ClosedRound;
import dev.privagg.job.CombinedRound;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.JobProgress;
import dev.privagg.job.NoiseBuffers;
import dev.privagg.job.OpenRound;
import dev.privagg.job.Participation;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.RoundSignal;
import dev.privagg.job.SecureRoundState;
import dev.privagg.job.ShardCommand;
import dev.privagg.job.ShardRound;
import dev.privagg.job.combine.CombinedRounds;
import dev.privagg.job.combine.MemoryCombinerStore;
import dev.privagg.job.combine.NoiseBlocks;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.shard.ShardSums;
import dev.privagg.job.state.MemoryRoundTable;
import dev.privagg.job.state.RoundTable;
import dev.privagg.privacy.PrivacyEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** In-memory state and a decision recorder: {@link RoundLifecycle} in tests, without Flink. */
final class LifecycleFakes {
  private LifecycleFakes() {}

  /** The job's state in memory, as the Flink adapter keeps it in keyed state. */
  static final class Store implements RoundStore, SeenClients, HeldUpdates {
    JobProgress progress;
    OpenRound round;
    final Set<String> seen = new HashSet<>();
    final TreeMap<Long, List<DecodedUpdate>> held = new TreeMap<>();
    final Map<String, Participation> participations = new HashMap<>();

    @Override
    public JobProgress progress() {
      return progress;
    }

    @Override
    public void saveProgress(JobProgress progress) {
      this.progress = progress;
    }

    @Override
    public OpenRound openRound() {
      return round;
    }

    @Override
    public void saveOpenRound(OpenRound round) {
      this.round = round;
    }

    SecureRoundState secure;

    @Override
    public SecureRoundState secureRound() {
      return secure;
    }

    @Override
    public void saveSecureRound(SecureRoundState round) {
      this.secure = round;
    }

    @Override
    public void clearRound() {
      round = null;
      secure = null;
      seen.clear();
    }

    @Override
    public SeenClients seenClients() {
      return this;
    }

    String mechanism;

    @Override
    public String mechanism() {
      return mechanism;
    }

    @Override
    public void saveMechanism(String mechanism) {
      this.mechanism = mechanism;
    }

    @Override
    public Participations participations() {
      return new Participations() {
        @Override
        public Participation get(String clientKey) {
          return participations.get(clientKey);
        }

        @Override
        public void put(String clientKey, Participation participation) {
          participations.put(clientKey, participation);
        }
      };
    }

    @Override
    public HeldUpdates held() {
      return this;
    }

    @Override
    public boolean contains(String clientKey) {
      return seen.contains(clientKey);
    }

    @Override
    public void add(String clientKey) {
      seen.add(clientKey);
    }

    @Override
    public void hold(long timestamp, DecodedUpdate update) {
      held.computeIfAbsent(timestamp, t -> new ArrayList<>()).add(update);
    }

    @Override
    public List<DecodedUpdate> take(long timestamp) {
      List<DecodedUpdate> taken = held.remove(timestamp);
      return taken == null ? List.of() : taken;
    }

    @Override
    public Iterable<Long> timestamps() {
      return new ArrayList<>(held.keySet());
    }

    @Override
    public boolean holdsAt(long timestamp) {
      return held.containsKey(timestamp);
    }

    /** A copy of the progress, as a savepoint would hold it. */
    JobProgress snapshotProgress() {
      JobProgress p = new JobProgress();
      p.currentRound = progress.currentRound;
      p.modelRound = progress.modelRound;
      p.openedMillis = progress.openedMillis;
      p.deadlineMillis = progress.deadlineMillis;
      p.closedEarly = progress.closedEarly;
      p.fixedSchedule = progress.fixedSchedule;
      p.reanchorMillis = progress.reanchorMillis;
      p.clipNorm = progress.clipNorm;
      p.exhausted = progress.exhausted;
      p.ledger = progress.ledger.clone();
      p.model = progress.model == null ? null : progress.model.clone();
      return p;
    }
  }

  /** A shard's state in memory. */
  static final class ShardStore implements ShardSums.Store {
    final Map<String, DecodedUpdate> values = new HashMap<>();
    final Map<String, ShardCommand> commands = new HashMap<>();
    final MemoryRoundTable<ShardRound> rounds = new MemoryRoundTable<>();

    @Override
    public DecodedUpdate takeValues(String position) {
      return values.remove(position);
    }

    @Override
    public void holdValues(String position, DecodedUpdate update) {
      values.put(position, update);
    }

    @Override
    public ShardCommand takeCommand(String position) {
      return commands.remove(position);
    }

    @Override
    public void holdCommand(String position, ShardCommand command) {
      commands.put(position, command);
    }

    @Override
    public RoundTable<ShardRound> rounds() {
      return rounds;
    }
  }

  /** Decisions as short strings and numbers that read well in assertions; timers as a set. */
  static final class Recorder implements RoundDecisions {
    final List<String> admitted = new ArrayList<>();
    final List<String> admittedFrom = new ArrayList<>();
    final List<String> rejects = new ArrayList<>();
    final List<String> rejectedFrom = new ArrayList<>();
    // Each reject as "clientId REASON: detail".
    final List<String> rejectDetails = new ArrayList<>();
    final List<String> announced = new ArrayList<>();
    final List<Double> announcedClipNorms = new ArrayList<>();
    final List<ClosedRound> closed = new ArrayList<>();
    final List<Long> released = new ArrayList<>();
    final List<float[]> models = new ArrayList<>();
    // With a spec (see releasing): one in-memory shard and combiner compute each release.
    private ShardSums shard;
    // One store per shard key, as each shard keeps its own keyed state.
    final Map<String, ShardStore> shardStores = new HashMap<>();

    private ShardStore shardStore(String shardKey) {
      return shardStores.computeIfAbsent(shardKey, k -> new ShardStore());
    }

    private CombinedRounds combiner;
    final MemoryCombinerStore combinerStore = new MemoryCombinerStore();

    Recorder() {}

    /** A recorder that also sums admitted updates and computes each released model. */
    static Recorder releasing(
        dev.privagg.spec.JobSpec spec, dev.privagg.privacy.NoiseSource noise, LedgerFloor floor) {
      Recorder r = new Recorder();
      r.shard = new ShardSums(spec);
      r.combiner = new CombinedRounds(spec, noise, floor);
      r.noiseBlocks = spec.correlated() ? new NoiseBlocks(spec, noise) : null;
      r.spec = spec;
      return r;
    }

    private final ShardSums.Output toCombiner =
        new ShardSums.Output() {
          @Override
          public void partial(RoundPartial partial) {
            combiner.partial(combinerStore, partial, released());
          }

          @Override
          public void clipped(boolean clipped, long nanos) {}
        };

    private CombinedRounds.Output released() {
      return new CombinedRounds.Output() {
        @Override
        public void release(
            RoundSignal sealed, CombinedRound sums, float[] model, long noiseNanos) {
          models.add(model.clone());
        }

        @Override
        public void withhold(RoundSignal sealed, CombinedRound sums) {}
      };
    }

    final List<Long> withheld = new ArrayList<>();
    final List<Long> full = new ArrayList<>();
    final List<Long> exhausted = new ArrayList<>();
    final List<Long> firstUnopenedRounds = new ArrayList<>();
    final List<Long> drained = new ArrayList<>();
    final TreeSet<Long> timers = new TreeSet<>();

    private static String position(DecodedUpdate update) {
      return update.clientId + "@" + update.sourcePartition + "/" + update.sourceOffset;
    }

    int initialModels;
    final List<Long> skipped = new ArrayList<>();

    @Override
    public void skip(
        long round, PrivacyEvent charge, double epsilonSpent, double clipNorm, long atMillis) {
      skipped.add(round);
    }

    @Override
    public void publishInitialModel(float[] model) {
      initialModels++;
    }

    @Override
    public void announce(
        long round, long baseModelRound, long openedMillis, long deadlineMillis, double clipNorm) {
      announced.add(round + " until " + deadlineMillis);
      announcedClipNorms.add(clipNorm);
      if (combiner != null) {
        combiner.opened(round, clipNorm);
      }
    }

    @Override
    public void admit(DecodedUpdate update, String shardKey, double clipNorm) {
      admitted.add(update.clientId);
      admittedFrom.add(position(update));
      if (shard != null) {
        shard.command(
            shardStore(shardKey), ShardCommand.admit(update, shardKey, clipNorm), toCombiner);
      }
    }

    @Override
    public void leaveUnsampled(DecodedUpdate update) {}

    final List<String> misbehaved = new ArrayList<>();

    @Override
    public void misbehaved(DecodedUpdate update, String detail) {
      misbehaved.add(update.clientId + " at " + position(update) + ": " + detail);
    }

    @Override
    public void reject(DecodedUpdate update, RejectReason reason, String detail) {
      rejects.add(update.clientId + " " + reason);
      rejectDetails.add(update.clientId + " " + reason + ": " + detail);
      rejectedFrom.add(position(update));
    }

    @Override
    public void release(
        ClosedRound round, long baseModelRound, OpenRound members, float[] carriedBase) {
      closed.add(round);
      released.add(round.round());
      seal(round, true, baseModelRound, members, carriedBase);
    }

    private void seal(
        ClosedRound round, boolean release, long base, OpenRound members, float[] carriedBase) {
      if (shard == null) {
        return;
      }
      String[] keys = members.shardKeys == null ? new String[0] : members.shardKeys;
      for (int i = 0; i < keys.length; i++) {
        shard.command(
            shardStore(keys[i]),
            ShardCommand.seal(JobFixtures.JOB, keys[i], round.round(), members.shardCounts[i]),
            toCombiner);
      }
      RoundSignal sealed = RoundSignal.sealed(round, release, base, members, JobFixtures.JOB);
      sealed.carriedModel = carriedBase;
      // As the decision emitter seals a secure round: the combiner waits for its unmask blocks too,
      // each computed as the unmask block operator computes it.
      List<dev.privagg.job.UnmaskRequest> blocks =
          unmaskBlocks.stream().filter(b -> b.round == round.round()).toList();
      unmaskBlocks.removeAll(blocks);
      String[] shards =
          java.util.Arrays.copyOf(sealed.shards, sealed.shards.length + blocks.size());
      for (int b = 0; b < blocks.size(); b++) {
        shards[sealed.shards.length + b] = blocks.get(b).blockKey;
      }
      sealed.shards = shards;
      combiner.sealed(combinerStore, sealed, released());
      for (dev.privagg.job.UnmaskRequest block : blocks) {
        combiner.partial(
            combinerStore,
            new dev.privagg.job.combine.UnmaskBlockFunction().map(block),
            released());
      }
      if (noiseBlocks != null) {
        // As the noise blocks answer the seal: each from its own buffers.
        for (dev.privagg.job.NoiseRequest request : NoiseBlocks.requests(spec, sealed)) {
          NoiseBlocks.Generated g = noiseBlocks.generate(blockBuffers.get(request.block), request);
          blockBuffers.put(request.block, g.buffers());
          combiner.partial(combinerStore, g.partial(), released());
        }
      }
    }

    private NoiseBlocks noiseBlocks;
    private dev.privagg.spec.JobSpec spec;
    final Map<Integer, NoiseBuffers> blockBuffers = new HashMap<>();

    @Override
    public void withhold(ClosedRound round, OpenRound members) {
      seal(round, false, -1, members, null);
      closed.add(round);
      withheld.add(round.round());
    }

    final List<Long> discarded = new ArrayList<>();

    @Override
    public void discard(long round, OpenRound members) {
      discarded.add(round);
      if (shard != null && members.shardKeys != null) {
        for (String key : members.shardKeys) {
          shard.command(
              shardStore(key), ShardCommand.discard(JobFixtures.JOB, key, round), toCombiner);
        }
      }
    }

    @Override
    public void reportFull(long round, long clientsSeen) {
      full.add(round);
    }

    @Override
    public void exhaust(
        long round, long firstUnopened, long finalModelRound, double epsilonSpent, long atMillis) {
      exhausted.add(round);
      firstUnopenedRounds.add(firstUnopened);
    }

    @Override
    public void adopt(LedgerFloor floor, long roundsInState) {}

    @Override
    public void drain(long round) {
      drained.add(round);
    }

    @Override
    public void registerTimer(long timestamp) {
      timers.add(timestamp);
    }

    final List<dev.privagg.avro.SecureRound> secureMessages = new ArrayList<>();
    final List<dev.privagg.job.UnmaskRequest> unmaskRequests = new ArrayList<>();
    final List<String> unmaskFailures = new ArrayList<>();

    @Override
    public void secureRound(dev.privagg.avro.SecureRound message) {
      secureMessages.add(message);
    }

    @Override
    public void unmaskFailed(long round, long maskedInputs, String problem) {
      unmaskFailures.add(round + ": " + problem);
    }

    // A releasing recorder's unmask requests, until the seal of their round takes them.
    private final List<dev.privagg.job.UnmaskRequest> unmaskBlocks = new ArrayList<>();

    @Override
    public void unmask(dev.privagg.job.UnmaskRequest request) {
      unmaskRequests.add(request);
      if (combiner != null) {
        unmaskBlocks.add(request);
      }
    }

    @Override
    public void deleteTimer(long timestamp) {
      timers.remove(timestamp);
    }

    /** Fires due timers in order, as Flink does when the watermark reaches {@code time}. */
    void advance(RoundLifecycle lifecycle, Store store, long time) {
      while (!timers.isEmpty() && timers.first() <= time) {
        lifecycle.eventTimeReached(store, timers.pollFirst(), false, 0, this);
      }
    }
  }
}
