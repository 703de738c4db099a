package dev.privagg.job.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.RejectReason;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.PrometheusSeries;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The names and labels privagg's metrics get from a Prometheus reporter ({@link PrivaggMetrics}).
 */
class PrivaggMetricsTest {
  private final Map<String, Set<String>> series =
      PrometheusSeries.registered(JobFixtures.exactSpec(""));

  @Test
  void perTrainingJobSeries_carryTheTrainingJobLabel_andNoJobLabel() {
    assertThat(series).isNotEmpty();
    series.forEach(
        (name, labels) -> {
          assertThat(labels).as(name).doesNotContain("job", "exported_job");
          assertThat(labels.contains("training_job"))
              .as(name)
              .isEqualTo(name.contains("_privagg_training_job_"));
        });
    assertThat(series)
        .containsKeys(
            "flink_taskmanager_job_task_operator_privagg_training_job_roundsReleased",
            "flink_taskmanager_job_task_operator_privagg_training_job_epsilonSpent",
            "flink_taskmanager_job_task_operator_privagg_training_job_budgetEpsilon",
            "flink_taskmanager_job_task_operator_privagg_training_job_releasesWithheld");
  }

  @Test
  void rejects_areOneNamePerScope_withTheReasonAsALabel() {
    assertThat(
            series.get(
                "flink_taskmanager_job_task_operator_privagg_training_job_reason_updatesRejected"))
        .contains("training_job", "reason");
    assertThat(series.get("flink_taskmanager_job_task_operator_privagg_reason_updatesRejected"))
        .contains("reason")
        .doesNotContain("training_job");
    String[] reasons = Arrays.stream(RejectReason.values()).map(Enum::name).toArray(String[]::new);
    assertThat(series.keySet()).noneMatch(name -> Arrays.stream(reasons).anyMatch(name::contains));
    assertThat(series.keySet()).noneMatch(name -> name.contains(JobFixtures.JOB.replace('-', '_')));
  }
}
