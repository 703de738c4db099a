package dev.privagg.bench;

import java.util.Locale;

/**
 * The state backend of the benchmarked job: Flink's heap backend, or RocksDB with incremental
 * checkpoints (a checkpoint then writes only the files new since the previous one).
 */
public enum StateBackendKind {
  HASHMAP,
  ROCKSDB;

  /** The value of Flink's {@code state.backend.type}, also the name on the command line. */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The backend named {@code name} ({@code hashmap} or {@code rocksdb}, any case). */
  public static StateBackendKind of(String name) {
    for (StateBackendKind kind : values()) {
      if (kind.configName().equalsIgnoreCase(name.trim())) {
        return kind;
      }
    }
    throw new IllegalArgumentException(
        "state backend must be hashmap or rocksdb, was '" + name + "'");
  }
}
