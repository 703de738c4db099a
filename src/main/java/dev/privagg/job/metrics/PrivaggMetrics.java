package dev.privagg.job.metrics;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * Where privagg's Flink metrics live under an operator's metric group. Per training job they sit in
 * the key/value group {@code privagg.training_job.<jobId>}, per reject reason in {@code
 * reason.<REASON>} below it, so a Prometheus reporter turns the job id and the reason into labels
 * ({@code training_job="..."}, {@code reason="..."}) and keeps one metric name for all of them. The
 * key is not {@code job}: Prometheus gives every scraped series a {@code job} label of its own (the
 * scrape job), and a second one would be renamed {@code exported_job}.
 */
public final class PrivaggMetrics {
  static final String GROUP = "privagg";
  static final String TRAINING_JOB = "training_job";
  public static final String REASON = "reason";

  private PrivaggMetrics() {}

  /** The metric group of one training job under an operator's group. */
  public static MetricGroup trainingJob(MetricGroup operatorGroup, String jobId) {
    return operatorGroup.addGroup(GROUP).addGroup(TRAINING_JOB, jobId);
  }

  /**
   * The group of what belongs to no training job this Flink job serves: rejects of records that
   * name none (undecodable bytes, another schema, an unknown job id), without a training_job label.
   */
  public static MetricGroup noTrainingJob(MetricGroup operatorGroup) {
    return operatorGroup.addGroup(GROUP);
  }

  /** Heartbeat ticks that could not be written (the ticking decode subtask only). */
  public static Counter heartbeatFailures(MetricGroup operatorGroup) {
    return operatorGroup.addGroup(GROUP).counter("heartbeatFailures");
  }
}
