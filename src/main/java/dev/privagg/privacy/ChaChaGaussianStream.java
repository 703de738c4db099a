package dev.privagg.privacy;

/**
 * Standard normal samples from a ChaCha20 keystream.
 *
 * <p>Sampling: Marsaglia's polar method on 53-bit uniforms gives independent normals; each sample
 * returned is (n1 + n2) / sqrt(2) with n1 and n2 from two different polar draws. Summing two normals is the defence of Holohan
 * and Braghin, "Secure Random Sampling in Differential Privacy", ESORICS 2021 (as adopted by IBM's
 * diffprivlib): a single polar or Box-Muller sample leaves gaps in the set of reachable doubles
 * that let an attacker who sees x + noise rule out values of x (Mironov 2012's floating-point
 * attack, adapted to the Gaussian); the sum fills those gaps. {@link StrictMath} keeps every
 * sample bit-identical on every JVM, which keyed replay relies on.
 */
final class ChaChaGaussianStream implements NoiseStream {
  private static final double INV_SQRT2 = 1 / Math.sqrt(2);
  private static final double UNIT = 0x1p-53;

  private final ChaCha20 bits;
  private final double[] pair = new double[2];
  private double spare;
  private boolean hasSpare;

  ChaChaGaussianStream(ChaCha20 bits) {
    this.bits = bits;
  }

  @Override
  public double nextStandardNormal() {
    if (hasSpare) {
      hasSpare = false;
      return spare;
    }
    // Two independent polar pairs (a1, a2) and (b1, b2) give two outputs, each the sum of values
    // from different pairs. Summing a1 + a2 would only rotate one draw and keep its gaps.
    polarPair();
    double a1 = pair[0];
    double a2 = pair[1];
    polarPair();
    spare = (a2 + pair[1]) * INV_SQRT2;
    hasSpare = true;
    return (a1 + pair[0]) * INV_SQRT2;
  }

  /** Marsaglia's polar method: two independent N(0, 1) samples into {@link #pair}. */
  private void polarPair() {
    while (true) {
      // Uniform in [-1, 1) on a 2^-53 grid: the top 54 bits as a signed integer.
      double u = (bits.nextLong() >> 10) * UNIT;
      double v = (bits.nextLong() >> 10) * UNIT;
      double s = u * u + v * v;
      if (s < 1 && s > 0) {
        double m = StrictMath.sqrt(-2 * StrictMath.log(s) / s);
        pair[0] = u * m;
        pair[1] = v * m;
        return;
      }
    }
  }
}
