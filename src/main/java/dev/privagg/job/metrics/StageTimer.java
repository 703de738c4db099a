package dev.privagg.job.metrics;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * Wall-clock nanoseconds an operator spends in one hot stage, as the Flink counter {@code
 * privagg.stage.<stage>Nanos}: decode, clip (clip-and-accumulate), noise, encode. The benchmark
 * divides them by the job's CPU time to show where time goes.
 */
public final class StageTimer {
  private final Counter nanos;

  public StageTimer(MetricGroup operatorGroup, String stage) {
    nanos = operatorGroup.addGroup(PrivaggMetrics.GROUP).addGroup("stage").counter(stage + "Nanos");
  }

  /** A start mark for {@link #stop}. */
  public static long start() {
    return System.nanoTime();
  }

  public void stop(long started) {
    add(System.nanoTime() - started);
  }

  /** Adds time measured elsewhere (in a class without Flink). */
  public void add(long elapsedNanos) {
    nanos.inc(elapsedNanos);
  }
}
