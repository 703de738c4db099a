package dev.privagg.job;

import dev.privagg.avro.RejectReason;
import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/** Reject counters of one training job, {@code privagg.job.<jobId>.rejected.<REASON>}. */
final class RejectMetrics {
  private final Map<RejectReason, Counter> rejected = new EnumMap<>(RejectReason.class);

  RejectMetrics(MetricGroup jobGroup) {
    for (RejectReason reason : RejectReason.values()) {
      rejected.put(reason, jobGroup.addGroup("rejected").counter(reason.name()));
    }
  }

  /** The metric group of one training job under an operator's group. */
  static MetricGroup jobGroup(MetricGroup operatorGroup, String jobId) {
    return operatorGroup.addGroup("privagg").addGroup("job", jobId);
  }

  void inc(RejectReason reason) {
    rejected.get(reason).inc();
  }
}
