package dev.privagg.job.state;

/** Keyed state access that may throw: a failure fails the task, as it would unwrapped. */
public final class KeyedState {
  private KeyedState() {}

  /** A state call with a result. */
  public interface Call<T> {
    T call() throws Exception;
  }

  /** A state call without one. */
  public interface Run {
    public void run() throws Exception;
  }

  public static <T> T call(Call<T> call) {
    try {
      return call.call();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("keyed state access failed", e);
    }
  }

  /** Removes and returns the value under {@code key}, or null. */
  public static <K, V> V take(org.apache.flink.api.common.state.MapState<K, V> map, K key) {
    return call(
        () -> {
          V value = map.get(key);
          if (value != null) {
            map.remove(key);
          }
          return value;
        });
  }

  /** {@code map} as a {@link RoundTable}. */
  public static <V> RoundTable<V> rounds(org.apache.flink.api.common.state.MapState<Long, V> map) {
    return new RoundTable<>() {
      @Override
      public V get(long round) {
        return call(() -> map.get(round));
      }

      @Override
      public void put(long round, V value) {
        run(() -> map.put(round, value));
      }

      @Override
      public void remove(long round) {
        run(() -> map.remove(round));
      }

      @Override
      public Iterable<Long> rounds() {
        return call(map::keys);
      }
    };
  }

  public static void run(Run run) {
    call(
        () -> {
          run.run();
          return null;
        });
  }
}
