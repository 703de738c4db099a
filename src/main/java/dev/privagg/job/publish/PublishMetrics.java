package dev.privagg.job.publish;

import dev.privagg.job.metrics.PrivaggMetrics;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * The publisher's counters per training job, in group {@code privagg.training_job.<jobId>}: {@code
 * releasesPublished} (copied to a public topic) and {@code releasesWithheld} (kept off it; each is
 * also logged as an error, and worth an alert).
 */
public final class PublishMetrics {
  private final Map<String, Counter> published = new HashMap<>();
  private final Map<String, Counter> withheld = new HashMap<>();

  public PublishMetrics(MetricGroup operatorGroup, Set<String> jobIds) {
    for (String jobId : jobIds) {
      MetricGroup group = PrivaggMetrics.trainingJob(operatorGroup, jobId);
      published.put(jobId, group.counter("releasesPublished"));
      withheld.put(jobId, group.counter("releasesWithheld"));
    }
  }

  void published(String jobId) {
    published.get(jobId).inc();
  }

  void withheld(String jobId) {
    withheld.get(jobId).inc();
  }
}
