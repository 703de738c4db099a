package dev.privagg.bench;

/**
 * How much of one setting to run: {@code warmupRounds} preloaded rounds that are not measured (the
 * JIT needs seconds to compile the hot loops), then {@code measuredRounds} preloaded rounds for
 * throughput and {@code latencyRounds} live rounds for latency. A setting whose updates would not
 * fit {@link Limits#maxSettingBytes} is skipped, with the reason.
 */
public record BenchPlan(
    BenchSetting setting,
    long recordBytes,
    int warmupRounds,
    int measuredRounds,
    int latencyRounds,
    String skipReason) {
  /** Enough for small rounds to reach steady state without preloading a huge setting twice. */
  static final int MAX_WARMUP_ROUNDS = 10;

  /** Volumes and bounds that size every setting's plan. */
  public record Limits(
      long warmupBytes,
      long throughputBytes,
      long latencyBytes,
      long maxSettingBytes,
      int maxMeasuredRounds,
      int minLatencyRounds,
      int maxLatencyRounds) {
    public Limits {
      if (!(warmupBytes > 0 && throughputBytes > 0 && latencyBytes > 0 && maxSettingBytes > 0)) {
        throw new IllegalArgumentException(
            "byte volumes must be > 0, were "
                + warmupBytes
                + ", "
                + throughputBytes
                + ", "
                + latencyBytes
                + ", "
                + maxSettingBytes);
      }
      if (!(maxMeasuredRounds >= 1 && minLatencyRounds >= 1)) {
        throw new IllegalArgumentException("round counts must be >= 1");
      }
      if (maxLatencyRounds < minLatencyRounds) {
        throw new IllegalArgumentException(
            "maxLatencyRounds must be >= minLatencyRounds ("
                + minLatencyRounds
                + "), was "
                + maxLatencyRounds);
      }
    }
  }

  /** Plans {@code setting} for updates of {@code recordBytes} encoded bytes each. */
  public static BenchPlan of(BenchSetting setting, long recordBytes, Limits limits) {
    long roundBytes = recordBytes * setting.clients();
    int warmup = (int) clamp(ceilDiv(limits.warmupBytes(), roundBytes), 1, MAX_WARMUP_ROUNDS);
    int measured =
        (int) clamp(limits.throughputBytes() / roundBytes, 1, limits.maxMeasuredRounds());
    int latency =
        (int)
            clamp(
                limits.latencyBytes() / roundBytes,
                limits.minLatencyRounds(),
                limits.maxLatencyRounds());
    long total = roundBytes * (warmup + measured + latency);
    String skip =
        total > limits.maxSettingBytes()
            ? String.format(
                "needs %.1f GB of updates (%d rounds of %.2f GB), over the %.1f GB per setting"
                    + " allowed by --max-setting-gb",
                total / 1e9,
                warmup + measured + latency,
                roundBytes / 1e9,
                limits.maxSettingBytes() / 1e9)
            : null;
    return new BenchPlan(setting, recordBytes, warmup, measured, latency, skip);
  }

  /** Bytes of one round's updates. */
  public long roundBytes() {
    return recordBytes * setting.clients();
  }

  /** Preloaded rounds: the warm-up rounds and the measured ones. */
  public int preloadedRounds() {
    return warmupRounds + measuredRounds;
  }

  public boolean skipped() {
    return skipReason != null;
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  private static long clamp(long value, long min, long max) {
    return Math.max(min, Math.min(max, value));
  }
}
