package dev.privagg.job.shard;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * How a job's updates spread over the summing subtasks: a client's updates always go to one shard
 * (a hash of its client key), and each shard of a job has a routing key that Flink assigns to its
 * own subtask, so S shards over S subtasks keep every subtask busy. The shard count changes nothing
 * in a release: the shards' fixed-point partial sums are integers and add exactly in any grouping.
 */
public final class ShardPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Max parallelism of the summing operator: fixed, because its keyed state is split by it. */
  public static final int MAX_PARALLELISM = 128;

  private final int shards;
  private transient Map<String, String[]> keys;

  /** {@code shards}: the summing operator's parallelism, 1 to {@link #MAX_PARALLELISM}. */
  public ShardPlan(int shards) {
    if (shards < 1 || shards > MAX_PARALLELISM) {
      throw new IllegalArgumentException(
          "shards must be in [1, " + MAX_PARALLELISM + "] (the job's parallelism), was " + shards);
    }
    this.shards = shards;
  }

  public int shards() {
    return shards;
  }

  /**
   * Routing keys of {@code name}'s blocks, one per shard, key b landing on subtask b (a secure
   * job's unmask blocks use {@code jobId + "#unmask"}).
   */
  public String[] blockKeys(String name) {
    return keysOf(name).clone();
  }

  /** The routing key of the shard that sums {@code clientKey}'s updates in job {@code jobId}. */
  public String keyFor(String jobId, String clientKey) {
    return keysOf(jobId)[Math.floorMod(clientKey.hashCode(), shards)];
  }

  /**
   * Routing keys of a job's shards, key s landing on subtask s: found by trying salts, since Flink
   * places a key by a hash of it (a few tries per shard on average).
   */
  private String[] keysOf(String jobId) {
    if (keys == null) {
      keys = new HashMap<>();
    }
    return keys.computeIfAbsent(
        jobId,
        id -> {
          String[] out = new String[shards];
          for (int s = 0; s < shards; s++) {
            for (int salt = 0; ; salt++) {
              String key = id + "#" + s + "." + salt;
              if (KeyGroupRangeAssignment.assignKeyToParallelOperator(key, MAX_PARALLELISM, shards)
                  == s) {
                out[s] = key;
                break;
              }
            }
          }
          return out;
        });
  }
}
