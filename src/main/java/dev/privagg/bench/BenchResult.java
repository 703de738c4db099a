package dev.privagg.bench;

import java.util.Map;

/**
 * What one setting measured. Throughput and the ceiling come from the same preloaded topic in the
 * same run, the ceiling with as many consumers as the job's source has readers; stage shares are
 * fractions of the job JVM's CPU time over the preloaded rounds (warm-up included), from job
 * submission to the last preloaded model; checkpoints are those triggered during the live rounds.
 */
public record BenchResult(
    BenchSetting setting,
    long recordBytes,
    int measuredRounds,
    double updatesPerSecond,
    double megabytesPerSecond,
    double ceilingMegabytesPerSecond,
    int latencyRounds,
    double latencyP50Millis,
    double latencyP99Millis,
    long heapPeakMb,
    long heapLivePeakMb,
    long rssPeakMb,
    Map<String, Double> stageShares,
    Checkpoints checkpoints,
    String skipReason) {

  /**
   * The checkpoints triggered during the live rounds: how many completed, the bytes they wrote per
   * second of the live phase and per live round (Flink's checkpointed size: with incremental
   * RocksDB only the files new since the previous checkpoint), and the full state one covered on
   * average.
   */
  public record Checkpoints(
      int completed, double megabytesPerSecond, double megabytesPerRound, double stateMegabytes) {
    static final Checkpoints NONE = new Checkpoints(0, Double.NaN, Double.NaN, Double.NaN);
  }

  /**
   * The stages the job times, in pipeline order; {@code correlatedNoise} is the noise blocks'
   * generation of BLT noise (zero with independent noise, whose draws are under {@code noise}).
   */
  public static final java.util.List<String> STAGES =
      java.util.List.of("decode", "clip", "noise", "correlatedNoise", "encode");

  /** A setting that was not run, and why. */
  public static BenchResult skipped(BenchPlan plan) {
    return new BenchResult(
        plan.setting(),
        plan.recordBytes(),
        0,
        Double.NaN,
        Double.NaN,
        Double.NaN,
        0,
        Double.NaN,
        Double.NaN,
        0,
        0,
        0,
        Map.of(),
        Checkpoints.NONE,
        plan.skipReason());
  }

  /** Pipeline MB/s over the raw consumer's MB/s on the same topic. */
  public double efficiency() {
    return megabytesPerSecond / ceilingMegabytesPerSecond;
  }

  public boolean skipped() {
    return skipReason != null;
  }
}
