package dev.privagg.job.combine;

import dev.privagg.job.decide.JobMetrics;
import dev.privagg.job.metrics.PrivaggMetrics;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * The combiner's metrics of one training job, in the same group {@code
 * privagg.training_job.<jobId>} as {@link JobMetrics}: what only the summed-up round shows.
 */
public final class ReleaseMetrics {
  final Counter updatesClipped;
  private volatile double clippedFraction;
  private volatile long roundLatencyMillis;

  public ReleaseMetrics(MetricGroup operatorGroup, String jobId) {
    MetricGroup group = PrivaggMetrics.trainingJob(operatorGroup, jobId);
    updatesClipped = group.counter("updatesClipped");
    group.gauge("clippedFraction", () -> clippedFraction);
    group.gauge("roundLatencyMillis", () -> roundLatencyMillis);
  }

  /** A round was summed up: its clipped share, and the wall-clock time since its deadline. */
  void round(long contributions, long clipped, long millisSinceDeadline) {
    updatesClipped.inc(clipped);
    clippedFraction = contributions == 0 ? 0 : (double) clipped / contributions;
    roundLatencyMillis = millisSinceDeadline;
  }
}
