package dev.privagg.job;

import dev.privagg.job.combine.ReleaseMetrics;
import dev.privagg.job.decide.JobMetrics;
import dev.privagg.job.decode.RejectMetrics;
import dev.privagg.job.metrics.PrivaggMetrics;
import dev.privagg.job.metrics.StageTimer;
import dev.privagg.job.publish.PublishMetrics;
import dev.privagg.spec.JobSpec;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.flink.api.common.JobID;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.metrics.groups.AbstractMetricGroup;
import org.apache.flink.runtime.metrics.groups.TaskManagerMetricGroup;
import org.apache.flink.runtime.metrics.util.TestingMetricRegistry;

/**
 * The Prometheus series privagg's operators register, named the way Flink's Prometheus reporter
 * names them: {@code flink_} + the group's logical scope joined by {@code _} + the metric name,
 * labelled by the group's variables. {@code MetricsIT} checks this rule against a real reporter's
 * scrape; {@code GrafanaDashboardTest} checks the dashboard against it, so a renamed metric breaks
 * one of them.
 */
public final class PrometheusSeries {
  private static final Pattern INVALID = Pattern.compile("[^a-zA-Z0-9:_]");

  private PrometheusSeries() {}

  /**
   * Every privagg series of a Flink job serving {@code spec}, by name, with its label names
   * (Flink's own, such as {@code job_name} and {@code operator_name}, and privagg's).
   */
  public static Map<String, Set<String>> registered(JobSpec spec) {
    Map<String, Set<String>> series = new TreeMap<>();
    TestingMetricRegistry registry =
        TestingMetricRegistry.builder()
            .setNumberReporters(1)
            .setRegisterConsumer(
                (metric, name, group) -> {
                  String prometheusName = name(name, group);
                  if (prometheusName.contains("_privagg_")) {
                    series
                        .computeIfAbsent(prometheusName, n -> new TreeSet<>())
                        .addAll(labels(group));
                  }
                })
            .build();
    MetricGroup operator =
        TaskManagerMetricGroup.createTaskManagerMetricGroup(
                registry, "localhost", ResourceID.generate())
            .addJob(new JobID(), "privagg")
            .addTask(ExecutionAttemptID.randomId(), "task")
            .getOrAddOperator("operator");
    // What each operator registers in its open(): decode, shard sums, decider, combiner, publisher.
    new RejectMetrics(PrivaggMetrics.trainingJob(operator, spec.jobId()));
    new RejectMetrics(PrivaggMetrics.noTrainingJob(operator));
    PrivaggMetrics.heartbeatFailures(operator);
    for (String stage : new String[] {"decode", "clip", "noise", "encode", "correlatedNoise"}) {
      new StageTimer(operator, stage);
    }
    new JobMetrics(operator, spec);
    new ReleaseMetrics(operator, spec.jobId());
    new PublishMetrics(operator, Set.of(spec.jobId()));
    return series;
  }

  /** The name Flink's Prometheus reporter gives {@code metric} in {@code group}. */
  static String name(String metric, AbstractMetricGroup<?> group) {
    return "flink_" + group.getLogicalScope(PrometheusSeries::filter, '_') + "_" + filter(metric);
  }

  private static Set<String> labels(AbstractMetricGroup<?> group) {
    Set<String> labels = new TreeSet<>();
    for (String variable : group.getAllVariables().keySet()) {
      labels.add(filter(variable.substring(1, variable.length() - 1)));
    }
    return labels;
  }

  private static String filter(String text) {
    return INVALID.matcher(text).replaceAll("_");
  }
}
