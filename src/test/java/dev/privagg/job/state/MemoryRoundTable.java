package dev.privagg.job.state;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;

/** Per-round state in memory, for tests of the stages that keep a {@link RoundTable}. */
public class MemoryRoundTable<V> implements RoundTable<V> {
  public final Map<Long, V> byRound = new HashMap<>();

  @Override
  public V get(long round) {
    return byRound.get(round);
  }

  @Override
  public void put(long round, V value) {
    byRound.put(round, value);
  }

  @Override
  public void remove(long round) {
    byRound.remove(round);
  }

  @Override
  public Iterable<Long> rounds() {
    return new ArrayList<>(byRound.keySet());
  }
}
