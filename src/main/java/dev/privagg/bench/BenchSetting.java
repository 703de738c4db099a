package dev.privagg.bench;

/**
 * One cell of the benchmark grid: updates of {@code dimension} float32 parameters, rounds of {@code
 * clients} updates (the job's m, closing early at m), the job at {@code parallelism} on an updates
 * topic of as many partitions, checkpointing every {@code checkpointMillis} to {@code
 * stateBackend}, adding noise by {@code mechanism}.
 */
public record BenchSetting(
    int dimension,
    int clients,
    int parallelism,
    long checkpointMillis,
    StateBackendKind stateBackend,
    NoiseMechanismKind mechanism) {
  /** Checkpoint interval of {@code privagg run}, and of the benchmark unless told otherwise. */
  public static final long DEFAULT_CHECKPOINT_MILLIS = 1000;

  public BenchSetting {
    if (dimension < 1) {
      throw new IllegalArgumentException("dimension must be >= 1, was " + dimension);
    }
    if (clients < 1) {
      throw new IllegalArgumentException("clients must be >= 1, was " + clients);
    }
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism must be >= 1, was " + parallelism);
    }
    if (checkpointMillis < 1) {
      throw new IllegalArgumentException("checkpointMillis must be >= 1, was " + checkpointMillis);
    }
    if (stateBackend == null) {
      throw new IllegalArgumentException("stateBackend must be given, was null");
    }
    if (mechanism == null) {
      throw new IllegalArgumentException("mechanism must be given, was null");
    }
  }

  /** Independent noise, the job's default mechanism. */
  public BenchSetting(
      int dimension,
      int clients,
      int parallelism,
      long checkpointMillis,
      StateBackendKind stateBackend) {
    this(
        dimension,
        clients,
        parallelism,
        checkpointMillis,
        stateBackend,
        NoiseMechanismKind.INDEPENDENT);
  }

  /** Parallelism 1, checkpoints every second, heap state: the job as {@code privagg run} runs. */
  public BenchSetting(int dimension, int clients) {
    this(dimension, clients, 1, DEFAULT_CHECKPOINT_MILLIS, StateBackendKind.HASHMAP);
  }

  /**
   * A name usable in job ids and topic names, e.g. {@code d1000000-m100-p2-c1000-hashmap}, with
   * {@code -blt} after it for correlated noise: every run gets topics of its own.
   */
  public String name() {
    return "d"
        + dimension
        + "-m"
        + clients
        + "-p"
        + parallelism
        + "-c"
        + checkpointMillis
        + "-"
        + stateBackend.configName()
        + (mechanism == NoiseMechanismKind.INDEPENDENT ? "" : "-" + mechanism.configName());
  }

  /** The same setting at parallelism 1: the base of its scaling figure. */
  public BenchSetting atParallelismOne() {
    return new BenchSetting(dimension, clients, 1, checkpointMillis, stateBackend, mechanism);
  }

  /** The same setting with independent noise: the base of a correlated-noise setting's ratios. */
  public BenchSetting withIndependentNoise() {
    return new BenchSetting(
        dimension,
        clients,
        parallelism,
        checkpointMillis,
        stateBackend,
        NoiseMechanismKind.INDEPENDENT);
  }

  /** The dimension as people write it: 10k, 1M, 8M. */
  public String dimensionLabel() {
    return dimensionLabel(dimension);
  }

  static String dimensionLabel(int dimension) {
    if (dimension % 1_000_000 == 0) {
      return dimension / 1_000_000 + "M";
    }
    if (dimension % 1_000 == 0) {
      return dimension / 1_000 + "k";
    }
    return Integer.toString(dimension);
  }
}
