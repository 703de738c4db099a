package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.CombinedRound;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.ModelState;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.RoundSignal;
import dev.privagg.job.ShardRound;
import dev.privagg.job.combine.CombinedRounds;
import dev.privagg.job.combine.MemoryCombinerStore;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.PrivacyLedger;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Found in a review of the combiner: a round it restores pending (sealed, a partial still in
 * flight: an unaligned checkpoint, or a savepoint older than the topics) may finish after the
 * decider adopted the topics and a later round was released on the topic's model. Finishing it then
 * releases an older round after a newer one (the publisher withholds it, or reports a conflict with
 * the public copy) and overwrites the combiner's model with the older round's: the next round,
 * which trains on the newer model, then waits for it forever.
 */
class PendingRoundAfterTakeOverTest {
  private final dev.privagg.spec.JobSpec spec = JobFixtures.exactSpec("");
  private final List<Long> released = new ArrayList<>();
  private final CombinedRounds.Output out =
      new CombinedRounds.Output() {
        @Override
        public void release(RoundSignal sealed, CombinedRound sums, float[] model, long nanos) {
          released.add(sealed.round);
        }

        @Override
        public void withhold(RoundSignal sealed, CombinedRound sums) {}
      };

  private static RoundSignal sealed(long round, long base, String... shards) {
    RoundSignal s = new RoundSignal();
    s.kind = RoundSignal.Kind.SEALED;
    s.jobId = JobFixtures.JOB;
    s.round = round;
    s.release = true;
    s.baseModelRound = base;
    s.shards = shards;
    return s;
  }

  private CombinedRounds combinerWithFloorAt(long modelRound) {
    LedgerFloor floor =
        new LedgerFloor(
            LedgerCodec.write(PrivacyLedger.EMPTY),
            modelRound + 1,
            false,
            modelRound,
            new float[spec.model().dimension()]);
    return new CombinedRounds(spec, NoiseSources.forSpec(spec), floor);
  }

  @Test
  void aRestoredPendingRound_finishingAfterANewerRelease_isDroppedNotKeptForever() {
    CombinedRounds combiner = combinerWithFloorAt(5);
    MemoryCombinerStore store = new MemoryCombinerStore();
    store.model = new ModelState(new float[spec.model().dimension()], 1);
    // Restored: round 2 sealed, its shard's partial still in flight.
    combiner.sealed(store, sealed(2, 1, "shard-x"), out);
    // The decider adopted the topics (model of round 5): round 6 trains on it.
    combiner.sealed(store, sealed(6, 5), out);
    assertThat(released).containsExactly(6L);
    // Round 2's partial arrives.
    RoundPartial partial = new RoundPartial(JobFixtures.JOB, "shard-x", 2, new ShardRound());
    combiner.partial(store, partial, out);
    combiner.sealed(store, sealed(7, 6), out);

    assertThat(released)
        .as("rounds reach the releases topic in increasing order, and round 7 is released")
        .containsExactly(6L, 7L);
    assertThat(store.rounds.byRound)
        .as("no round waits forever for a model that never comes")
        .isEmpty();
  }

  @Test
  void aRoundWhoseModelTheTopicsAlreadyShow_isNotComputedAgain() {
    // A savepoint holding round 3 sealed but not yet combined; the run went on to release round 3
    // (committed) and was cancelled; the operator restores the savepoint. With secure noise a
    // second computation of round 3 has other bytes: a conflict that stops the restored run.
    CombinedRounds combiner = combinerWithFloorAt(3);
    MemoryCombinerStore store = new MemoryCombinerStore();
    store.model = new ModelState(new float[spec.model().dimension()], 2);
    combiner.sealed(store, sealed(3, 2), out);
    combiner.sealed(store, sealed(4, 3), out);

    assertThat(released).containsExactly(4L);
  }
}
