package dev.privagg.job;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/**
 * Wall-clock nanoseconds an operator spends in one hot stage, as the Flink counter {@code
 * privagg.stage.<stage>Nanos}: decode, clip (clip-and-accumulate), noise, encode. The benchmark
 * divides them by the job's CPU time to show where time goes.
 */
final class StageTimer {
  private final Counter nanos;

  StageTimer(MetricGroup operatorGroup, String stage) {
    nanos = operatorGroup.addGroup(PrivaggMetrics.GROUP).addGroup("stage").counter(stage + "Nanos");
  }

  /** A start mark for {@link #stop}. */
  static long start() {
    return System.nanoTime();
  }

  void stop(long started) {
    add(System.nanoTime() - started);
  }

  /** Adds time measured elsewhere (in a class without Flink). */
  void add(long elapsedNanos) {
    nanos.inc(elapsedNanos);
  }
}
