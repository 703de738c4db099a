package dev.privagg.job.decide;

import dev.privagg.avro.RejectReason;
import dev.privagg.job.combine.ReleaseMetrics;
import dev.privagg.job.decode.RejectMetrics;
import dev.privagg.job.metrics.PrivaggMetrics;
import dev.privagg.job.publish.PublishMetrics;
import dev.privagg.spec.JobSpec;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * The round decider's Flink metrics of one training job, in group {@code
 * privagg.training_job.<jobId>} ({@link PrivaggMetrics}; the combiner adds {@link ReleaseMetrics},
 * the publisher {@link PublishMetrics}). Exact counts are operator-internal, like the ledger.
 */
public final class JobMetrics {
  final Counter roundsReleased;
  final Counter roundsNotReleased;
  final Counter updatesAccepted;
  final Counter updatesNotSampled;
  final Counter roundsFull;
  final Counter roundsNotUnmasked;
  final Counter secureClientsNamed;
  private final RejectMetrics rejected;
  private volatile double epsilonSpent;
  private volatile double clipNorm;
  private volatile long heldUpdates;
  private volatile long heldBytes;

  public JobMetrics(MetricGroup operatorGroup, JobSpec spec) {
    MetricGroup group = PrivaggMetrics.trainingJob(operatorGroup, spec.jobId());
    roundsReleased = group.counter("roundsReleased");
    roundsNotReleased = group.counter("roundsNotReleased");
    updatesAccepted = group.counter("updatesAccepted");
    updatesNotSampled = group.counter("updatesNotSampled");
    roundsFull = group.counter("roundsFull");
    roundsNotUnmasked = group.counter("roundsNotUnmasked");
    secureClientsNamed = group.counter("secureClientsNamed");
    rejected = new RejectMetrics(group);
    group.gauge("epsilonSpent", () -> epsilonSpent);
    // Constant, beside epsilonSpent so a dashboard can show both without reading the spec.
    double budget = spec.privacy().budgetEpsilon();
    group.gauge("budgetEpsilon", () -> budget);
    // The open round's C: constant unless the job clips adaptively.
    clipNorm = spec.privacy().clipNorm();
    group.gauge("clipNorm", () -> clipNorm);
    // Updates read but not yet decided (see RoundLifecycle): bounded by partition skew.
    group.gauge("heldUpdates", () -> Math.max(0, heldUpdates));
    group.gauge("heldBytes", () -> Math.max(0, heldBytes));
  }

  void rejected(RejectReason reason) {
    rejected.inc(reason);
  }

  void epsilonSpent(double epsilon) {
    epsilonSpent = epsilon;
  }

  void clipNorm(double clipNorm) {
    this.clipNorm = clipNorm;
  }

  /** Updates (and their value bytes) put on hold, or taken off hold when negative. */
  void held(long updates, long bytes) {
    heldUpdates += updates;
    heldBytes += bytes;
  }

  /**
   * Nothing is held any more. Counts start at zero when the operator starts, also when restored
   * state holds updates; this puts them right again once the hold has emptied.
   */
  void noneHeld() {
    heldUpdates = 0;
    heldBytes = 0;
  }
}
