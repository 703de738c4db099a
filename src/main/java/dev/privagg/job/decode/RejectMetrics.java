package dev.privagg.job.decode;

import dev.privagg.avro.RejectReason;
import dev.privagg.job.metrics.PrivaggMetrics;
import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * Reject counters, one per reason: {@code updatesRejected} in group {@code
 * privagg.training_job.<jobId>.reason.<REASON>} (in Prometheus {@code
 * ..._privagg_training_job_reason_updatesRejected{training_job="...", reason="..."}}), or for
 * records of no known training job {@code privagg.reason.<REASON>}.
 */
public final class RejectMetrics {
  private final Map<RejectReason, Counter> rejected = new EnumMap<>(RejectReason.class);

  /**
   * @param parent {@link PrivaggMetrics#trainingJob} or {@link PrivaggMetrics#noTrainingJob}
   */
  public RejectMetrics(MetricGroup parent) {
    for (RejectReason reason : RejectReason.values()) {
      rejected.put(
          reason, parent.addGroup(PrivaggMetrics.REASON, reason.name()).counter("updatesRejected"));
    }
  }

  public void inc(RejectReason reason) {
    rejected.get(reason).inc();
  }
}
