package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.exactSpec;
import static dev.privagg.job.JobFixtures.ledger;
import static dev.privagg.job.JobFixtures.models;
import static dev.privagg.job.JobFixtures.rejects;
import static dev.privagg.job.JobFixtures.update;
import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.RejectReason;
import dev.privagg.job.decide.DecideFunction;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.junit.jupiter.api.Test;

/**
 * An open round restored from state an older version wrote (units at 2^40, no fractionBits or seen
 * count, seen-clients keyed by raw client ids): a client who sent before the upgrade is still a
 * duplicate after it (design.md invariant 1), however many updates come in between.
 */
class LegacyRoundStateTest {

  @SuppressWarnings("unchecked")
  @Test
  void legacyRound_clientFromBeforeTheUpgrade_isStillADuplicate_andTheSumIsRescaled()
      throws Exception {
    DecideFunction aggregator = new DecideFunction(List.of(exactSpec("")), java.util.Map.of());
    var harness = new RoundsHarness(aggregator, List.of(exactSpec("")), java.util.Map.of());
    var op = harness.deciderOperator();
    harness.setProcessingTime(JobFixtures.T0);
    harness.open();
    harness.processElement2(JOB, 0);
    harness.getOutput().clear();

    // Make the open round look like the old version's state: units at 2^40, no fractionBits/seen,
    // and "alice" (who sent w0 = 0.5 before the upgrade) in seen-clients under her raw id.
    op.setCurrentKey(JOB);
    ValueState<OpenRound> openRound = (ValueState<OpenRound>) field(aggregator, "openRoundState");
    MapState<String, Boolean> seen = (MapState<String, Boolean>) field(aggregator, "seenClients");
    OpenRound legacy = new OpenRound();
    legacy.units = new long[] {(long) (0.5 * Math.scalb(1.0, 40)), 0, 0};
    legacy.fractionBits = 0;
    legacy.contributions = 1;
    legacy.seen = 0;
    openRound.update(legacy);
    seen.put("alice", Boolean.TRUE);

    harness.processElement1(update("bob", 1, 0f, 0.5f, 0f), 1); // first update after restore
    harness.processElement1(update("alice", 1, 0.5f, 0f, 0f), 2); // alice again
    harness.processBothWatermarks(new org.apache.flink.streaming.api.watermark.Watermark(TIMEOUT));
    List<OutboundRecord> out = new ArrayList<>(harness.extractOutputValues());
    harness.close();

    assertThat(rejects(out))
        .extracting(r -> r.getReason())
        .as("alice's second update must be rejected as a duplicate")
        .containsExactly(RejectReason.DUPLICATE_CLIENT);
    assertThat(ledger(out).get(0).getContributions()).isEqualTo(2);
    // (0.5, 0, 0) from before the upgrade + (0, 0.5, 0), over m = 2.
    assertThat(weights(models(out).get(0))).containsExactly(0.25f, 0.25f, 0f);
  }

  private static Object field(Object target, String name) throws Exception {
    Field f = target.getClass().getDeclaredField(name);
    f.setAccessible(true);
    return f.get(target);
  }
}
