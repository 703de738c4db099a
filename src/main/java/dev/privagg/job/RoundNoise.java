package dev.privagg.job;

/**
 * A correlated-noise round's noise at the combiner, as its blocks come in (operator-internal):
 * sigma (C^-1 Z)_t over the whole model, and the block keys received so far.
 */
public class RoundNoise {
  /** The model-sized noise; each block fills its own coordinates. */
  public double[] values;

  /** Noise block keys whose values are in. */
  public String[] received = new String[0];

  public RoundNoise() {}

  public RoundNoise(double[] values) {
    this.values = values;
  }
}
