package dev.privagg.statistics;

/**
 * One bounded sum a statistics job releases: a tensor of the released vector. A client's
 * contribution to it has L2 norm at most {@code sensitivity} in the data's units; the client scales
 * it by {@link #scale()} so that its norm is at most sqrt(share), and the scaled blocks of one
 * client together have norm at most 1, the job's clip norm.
 *
 * @param name the tensor's name: {@code count}, or {@code <feature>.sum}, {@code .sumOfSquares},
 *     {@code .histogram}
 * @param kind which bounded sum
 * @param feature the feature's index in the query, -1 for the count
 * @param size values in the block (1, or the bins)
 * @param sensitivity Delta: L2 bound of one client's unscaled contribution
 * @param share this block's fraction of the squared clip norm; all shares add up to 1
 */
public record Block(
    String name, Kind kind, int feature, int size, double sensitivity, double share) {

  /** The bounded sums. */
  public enum Kind {
    /** Rows the client holds, at most maxRows. */
    COUNT,
    /** Sum over rows of (x - midpoint), each term within +-h. */
    SUM,
    /** Sum over rows of ((x - midpoint)^2 - h^2 / 2), each term within +-h^2 / 2. */
    SUM_OF_SQUARES,
    /** Rows per bin; a client's histogram has L2 norm at most maxRows. */
    HISTOGRAM
  }

  /** Checks the sizes, sensitivity and share. */
  public Block {
    if (size < 1) {
      throw new IllegalArgumentException("block " + name + ": size must be >= 1, was " + size);
    }
    if (!(sensitivity > 0 && Double.isFinite(sensitivity))) {
      throw new IllegalArgumentException(
          "block " + name + ": sensitivity must be > 0 and finite, was " + sensitivity);
    }
    if (!(share > 0 && share <= 1)) {
      throw new IllegalArgumentException(
          "block " + name + ": share must be in (0, 1], was " + share);
    }
  }

  /**
   * w = (1 - 2^-19) sqrt(share) / sensitivity: what the client multiplies its sums by. The factor
   * just below 1 keeps an honest block under the job's clip bound after float rounding, so the job
   * never rescales it (its clipping leaves norms up to (1 - 2^-20) times the bound untouched).
   */
  public double scale() {
    return HEADROOM * Math.sqrt(share) / sensitivity;
  }

  private static final double HEADROOM = 1.0 - 0x1p-19;

  /**
   * The std of this block's noise in the data's units when the job adds N(0, z^2) to the scaled sum
   * (clip norm 1): z / w = z * sensitivity / sqrt(share).
   */
  public double noiseStd(double noiseMultiplier) {
    return noiseMultiplier / scale();
  }

  /**
   * The noise multiplier of this block released alone: its Gaussian has std z / w on a sum of
   * sensitivity Delta, so z / sqrt(share).
   */
  public double blockNoiseMultiplier(double noiseMultiplier) {
    return noiseMultiplier / Math.sqrt(share);
  }
}
