package dev.privagg.secagg;

import java.util.List;

/**
 * What the job adds to the sum of the masked inputs to leave the sum of the survivors' updates:
 * minus each survivor's self-mask, and minus each survivor's pairwise mask with each dropped
 * neighbour. A list of (mask key, sign) terms, applied to any range of coordinates, so each shard
 * of the model corrects its own part.
 */
public final class MaskCorrection {
  /** Add {@code sign * mask(key)}. */
  public record Term(byte[] key, int sign) {
    public Term {
      key = Bytes.requireLength("key", key, 32).clone();
      if (sign != 1 && sign != -1) {
        throw new IllegalArgumentException("sign must be +1 or -1, was " + sign);
      }
    }

    @Override
    public byte[] key() {
      return key.clone();
    }
  }

  private final List<Term> terms;

  public MaskCorrection(List<Term> terms) {
    this.terms = List.copyOf(terms);
  }

  public List<Term> terms() {
    return terms;
  }

  /**
   * Adds every term to {@code sum[j - from]} for the coordinates j in {@code [from, to)}, modulo
   * 2^64.
   */
  public void applyTo(long[] sum, int from, int to) {
    for (Term term : terms) {
      new MaskStream(term.key).addTo(sum, from, to, term.sign);
    }
  }
}
