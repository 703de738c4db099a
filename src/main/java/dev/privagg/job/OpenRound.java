package dev.privagg.job;

import dev.privagg.privacy.ClippedSum;

/**
 * The open round as the decider keeps it: counts, and how many members each shard sums (the sums
 * live in the shards). O(shards), plus the round's client-id hashes kept apart in map state.
 */
public class OpenRound {
  /** Fixed-point scale of {@link #units} when this state was written before the scale was kept. */
  static final int LEGACY_FRACTION_BITS = 40;

  /**
   * The fixed-point sum as versions before sharded summing kept it here; null in rounds opened
   * since (see {@link #carriedUnits}).
   */
  public long[] units;

  /** Routing keys of the shards that sum this round's members, and how many each was sent. */
  public String[] shardKeys;

  public long[] shardCounts;

  /** Scale of {@link #units}; 0 in state from versions that did not record it (then 2^40). */
  public int fractionBits;

  public long contributions;
  public long clipped;

  /** Admitted members whose norm was at most the round's C (adaptive clipping only). */
  public long unclipped;

  /**
   * The C the round was announced with, which its members are clipped to (the shards' units are
   * relative to it) until it closes, whatever spec a restore brings; 0 in state from versions that
   * did not record it (then the decider's current C).
   */
  public double clipNorm;

  /**
   * The sampling rate the round was opened with, under which its members were admitted: a restore
   * whose spec samples at a lower rate must not charge them at it. 0 in state from versions that
   * did not record it (then the spec's). Transient only to Flink's POJO serializer, so the POJO
   * schema that 0.1.0 savepoints pin stays as it was (ReleasedSavepointPojoFieldsTest): the
   * open-round layout writes it from version 2 on.
   */
  public transient double samplingRate;

  /** Clients seen this round, sampled or not: what the per-round capacity is checked against. */
  public long seen;

  /**
   * True for a round restored from a version that kept raw client ids (not digests) in the
   * seen-clients state: the duplicate check must then look up both forms until the round closes.
   */
  public boolean legacyClientIds;

  /** Some client was rejected ROUND_FULL this round. */
  public boolean turnedAway;

  public OpenRound() {}

  /** A round just opened. */
  public static OpenRound empty() {
    OpenRound round = new OpenRound();
    round.fractionBits = ClippedSum.FRACTION_BITS;
    return round;
  }

  /** Counts one member summed by shard {@code shardKey}. */
  public void admit(String shardKey) {
    contributions++;
    int n = shardKeys == null ? 0 : shardKeys.length;
    for (int i = 0; i < n; i++) {
      if (shardKeys[i].equals(shardKey)) {
        shardCounts[i]++;
        return;
      }
    }
    shardKeys = java.util.Arrays.copyOf(shardKeys == null ? new String[0] : shardKeys, n + 1);
    shardCounts = java.util.Arrays.copyOf(shardCounts == null ? new long[0] : shardCounts, n + 1);
    shardKeys[n] = shardKey;
    shardCounts[n] = 1;
  }

  /** The sum an earlier version accumulated here before the upgrade, or null. */
  long[] carriedUnits() {
    return units;
  }

  /**
   * Brings state written by an older version to the current form: units at the current fixed-point
   * scale (see ClippedSum), the seen count at least the contributions, and raw ids remembered.
   */
  public OpenRound atCurrentScale() {
    if (fractionBits == 0) {
      legacyClientIds = true;
      seen = Math.max(seen, contributions);
    }
    int bits = fractionBits == 0 ? LEGACY_FRACTION_BITS : fractionBits;
    if (units != null && bits != ClippedSum.FRACTION_BITS) {
      units = ClippedSum.rescaled(units, bits);
      fractionBits = ClippedSum.FRACTION_BITS;
    }
    return this;
  }
}
