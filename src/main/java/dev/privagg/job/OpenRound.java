package dev.privagg.job;

import dev.privagg.privacy.ClippedSum;

/**
 * Accumulator of the open round: fixed-point clipped sum and counts. O(model size), plus the
 * round's client-id hashes kept apart in map state.
 */
public class OpenRound {
  /** Fixed-point scale of {@link #units} when this state was written before the scale was kept. */
  static final int LEGACY_FRACTION_BITS = 40;

  public long[] units;

  /** Scale of {@link #units}; 0 in state from versions that did not record it (then 2^40). */
  public int fractionBits;

  public long contributions;
  public long clipped;

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

  OpenRound(int dimension) {
    this.units = new long[dimension];
    this.fractionBits = ClippedSum.FRACTION_BITS;
  }

  /**
   * Brings state written by an older version to the current form: units at the current fixed-point
   * scale (see ClippedSum), the seen count at least the contributions, and raw ids remembered.
   */
  OpenRound atCurrentScale() {
    if (fractionBits == 0) {
      legacyClientIds = true;
      seen = Math.max(seen, contributions);
    }
    int bits = fractionBits == 0 ? LEGACY_FRACTION_BITS : fractionBits;
    if (bits != ClippedSum.FRACTION_BITS) {
      units = ClippedSum.rescaled(units, bits);
      fractionBits = ClippedSum.FRACTION_BITS;
    }
    return this;
  }
}
