package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.exactSpec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.decide.DecideFunction;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * Found in review: held updates are kept as one list per broker millisecond, rewritten (copied) on
 * every append. With LogAppendTime every record of one produce batch gets the same timestamp, so a
 * client controls how many updates share a millisecond: one batch of n tiny updates costs O(n^2) in
 * the aggregator (with RocksDB, n full serializations of a growing list). A few such batches stall
 * the operator until checkpoints time out and the job restarts, to read the same batches.
 */
class HeldUpdatesFloodTest {
  private static long holdMillis(int n, boolean oneMillisecond) throws Exception {
    try (var h =
        new KeyedTwoInputStreamOperatorTestHarness<String, DecodedUpdate, String, OutboundRecord>(
            new KeyedCoProcessOperator<>(new DecideFunction(List.of(exactSpec("")), Map.of())),
            u -> u.jobId,
            id -> id,
            Types.STRING)) {
      h.setProcessingTime(0);
      h.open();
      h.processElement2(JOB, 0);
      long started = System.nanoTime();
      for (int i = 0; i < n; i++) {
        DecodedUpdate u = update("c" + i, 1, 0.1f, 0f, 0f);
        u.sourceOffset = i;
        h.processElement1(new StreamRecord<>(u, oneMillisecond ? 500 : 500 + i));
      }
      return (System.nanoTime() - started) / 1_000_000;
    }
  }

  @Test
  void holdingOneBatchOfUpdatesStampedInOneMillisecond_costsAboutWhatSpreadUpdatesCost()
      throws Exception {
    int n = 30_000; // a 2 MiB produce batch of ~70-byte updates of a 3-parameter model
    holdMillis(2_000, true); // warm-up
    long spread = holdMillis(n, false);
    long oneMs = holdMillis(n, true);
    System.out.printf("hold %d updates: spread over ms %d ms, in one ms %d ms%n", n, spread, oneMs);
    assertThat(oneMs).isLessThanOrEqualTo(5 * spread + 200);
  }
}
