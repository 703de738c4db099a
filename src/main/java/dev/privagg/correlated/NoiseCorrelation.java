package dev.privagg.correlated;

/**
 * A strategy C applied to a stream of fresh noise: round by round, {@code Z_t} becomes {@code (C^-1
 * Z)_t} from a fixed number of model-sized buffers that carry the rounds before.
 */
public interface NoiseCorrelation {
  /** How many buffers of the values' size the recursion keeps. */
  int buffers();

  /** Replaces this round's fresh Z in {@code values} by its correlated noise, updating buffers. */
  void correlate(double[][] buffers, double[] values);
}
