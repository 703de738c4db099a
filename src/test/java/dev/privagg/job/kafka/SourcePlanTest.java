package dev.privagg.job.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SourcePlanTest {
  @Test
  void parallelismAbovePartitions_runsOneReaderPerPartition_andSaysWhy() {
    SourcePlan plan = new SourcePlan("privagg.updates", 2, 3);

    assertThat(plan.parallelism()).isEqualTo(2);
    assertThat(plan.describe())
        .isEqualTo(
            "updates source runs at 2 subtasks, the rest of the job at 3: topic privagg.updates"
                + " has 2 partitions, and a reader without a partition would hold event time back"
                + " so no round could close");
  }

  @Test
  void partitionsAtOrAboveParallelism_keepTheJobsParallelism() {
    assertThat(new SourcePlan("u", 2, 2).parallelism()).isEqualTo(2);
    assertThat(new SourcePlan("u", 8, 3).parallelism()).isEqualTo(3);
    assertThat(new SourcePlan("u", 8, 3).describe())
        .isEqualTo("updates source runs at 3 subtasks (topic u has 8 partitions)");
  }

  @Test
  void zeroPartitions_isRefused() {
    assertThatThrownBy(() -> new SourcePlan("u", 0, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("partitions and jobParallelism must be >= 1, were 0 and 3");
  }
}
