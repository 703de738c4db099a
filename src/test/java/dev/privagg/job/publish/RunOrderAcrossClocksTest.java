package dev.privagg.job.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.privagg.job.InternalRelease;
import dev.privagg.job.PublicRounds;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * Found in review: runs are ordered by the submitting machine's wall clock. A job cancelled (or
 * whose state was lost) and resubmitted from a machine whose clock is behind the first submitter's
 * can never start: its publisher reads the cancelled run's last committed release from the
 * (compacted) releases topic, sees a "newer" run and fails the new job for good.
 */
class RunOrderAcrossClocksTest {
  @Test
  void freshResubmitFromAMachineWithASlowerClock_isNotStoppedByTheCancelledRunsOldReleases()
      throws Exception {
    // First run submitted at 10:00:30 by a clock 60 s fast; cancelled; the operator resubmits
    // (state lost) at 10:00:00 real time from another machine.
    PublicRounds.Run cancelled = new PublicRounds.Run(1_000_060_000L, "first");
    // Its start comes after every run the releases topic has seen, whatever the clock says.
    PublicRounds.Run resubmitted =
        PublicRounds.Run.after(1_000_030_000L, cancelled.startMillis(), "second");
    assertThat(resubmitted.isNewerThan(cancelled)).isTrue();
    // What the public models topic holds: round 7, copied by the first run's publisher.
    byte[] model7 = {7};
    Map<String, PublicRounds.Position> publicTopics =
        Map.of("privagg.models/j", new PublicRounds.Position(7, PublishFunction.digest(model7)));
    try (var h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(
                new PublishFunction(
                    Set.of("privagg.models", "privagg.rounds"),
                    Set.of("j"),
                    publicTopics,
                    resubmitted)),
            InternalRelease::positionKey,
            Types.STRING)) {
      h.open();
      InternalRelease r = new InternalRelease();
      r.publicTopic = "privagg.models";
      r.jobId = "j";
      r.round = 7;
      r.value = model7;
      r.run = cancelled.encode();
      // The releases topic is read from the earliest offset: the cancelled run's last model is
      // the first record the new publisher sees.
      assertThatCode(() -> h.processElement(new StreamRecord<>(r)))
          .as("a dead run's old release must not stop the only running job")
          .doesNotThrowAnyException();
    }
  }
}
