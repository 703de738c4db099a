package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.exactSpec;
import static dev.privagg.job.JobFixtures.ledger;
import static dev.privagg.job.JobFixtures.models;
import static dev.privagg.job.JobFixtures.update;
import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.decide.DecideFunction;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.shard.ShardPlan;
import dev.privagg.privacy.PrivacyLedger;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.junit.jupiter.api.Test;

/**
 * Found in a review of the sharded aggregation: state from the previous version keeps the released
 * model in the decider ({@code JobProgress.model}); this version keeps it in the combiner, whose
 * state is empty after the upgrade. The combiner then takes the base model only from the topics'
 * floor. If the floor is behind the state (a retained checkpoint restored before its last
 * transaction was committed: the reconciler reads read_committed, and the sink commits that
 * transaction only after the job is up), the next round waits for a base model that never comes: it
 * is charged as RELEASED in the ledger and never released, and so is every later round.
 */
class ModelFromStateBeforeShardingTest {

  @SuppressWarnings("unchecked")
  @Test
  void upgradeFromLegacyState_nextRoundTrainsOnTheStatesModel_evenWhenTheFloorLagsBehind()
      throws Exception {
    var spec = exactSpec("");
    // The previous version's run: round 1 released (model of round 1 in the decider's state).
    var before = new RoundsHarness(List.of(spec), Map.of());
    before.setProcessingTime(0);
    before.open();
    before.processElement2(JOB, 0);
    before.processElement1(update("alice", 1, 0.5f, 0f, 0f), 10);
    before.processBothWatermarks(new Watermark(1000));
    List<OutboundRecord> out1 = before.extractOutputValues();
    float[] model1 = weights(models(out1).get(models(out1).size() - 1));
    assertThat(models(out1).get(models(out1).size() - 1).getRound()).isEqualTo(1);
    var snapshot = before.snapshot(1, 0);
    before.close();

    // What the topics show when the upgraded job starts: round 1's transaction not committed yet.
    LedgerFloor lagging =
        new LedgerFloor(LedgerCodec.write(PrivacyLedger.EMPTY), 1, false, 0, spec.initialWeights());
    DecideFunction aggregator =
        new DecideFunction(List.of(spec), Map.of(JOB, lagging), Long.MAX_VALUE, new ShardPlan(2));
    var after = new RoundsHarness(aggregator, List.of(spec), Map.of(JOB, lagging));
    after.setProcessingTime(0);
    after.initializeDeciderState(snapshot.decider()); // the legacy version had no shards/combiner
    after.open();
    // The previous version kept the model of round 1 here.
    after.deciderOperator().setCurrentKey(JOB);
    ValueState<JobProgress> progressState =
        (ValueState<JobProgress>) field(aggregator, "progressState");
    JobProgress progress = progressState.value();
    assertThat(progress.modelRound).isEqualTo(1);
    progress.model = model1.clone();
    progressState.update(progress);

    after.processElement2(JOB, 0); // the start event, replayed
    after.processElement1(update("bob", 2, 0f, 0.5f, 0f), 1500);
    after.processBothWatermarks(new Watermark(2000));
    List<OutboundRecord> out2 = after.extractOutputValues();
    after.close();

    assertThat(ledger(out2)).extracting(e -> e.getRound()).contains(2L);
    assertThat(models(out2))
        .as("round 2 is charged as released, so its model must come out")
        .extracting(m -> m.getRound())
        .containsExactly(2L);
    assertThat(weights(models(out2).get(0))).containsExactly(0.25f, 0.25f, 0f);
  }

  private static Object field(Object target, String name) throws Exception {
    Field f = target.getClass().getDeclaredField(name);
    f.setAccessible(true);
    return f.get(target);
  }
}
