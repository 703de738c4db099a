package dev.privagg.job.state;

/** Per-round state by round number: a shard's running sums, the combiner's waiting rounds. */
public interface RoundTable<V> {
  /** The value of {@code round}, or null. */
  V get(long round);

  void put(long round, V value);

  void remove(long round);

  /** Rounds held now, in any order. */
  Iterable<Long> rounds();
}
