package dev.privagg.privacy;

/**
 * Standard normal samples from a ChaCha12 keystream.
 *
 * <p>Each normal comes from a 256-layer ziggurat (Marsaglia and Tsang, "The Ziggurat Method for
 * Generating Random Variables", 2000), in the form of Doornik, "An Improved Ziggurat Method to
 * Generate Normal Random Samples", 2005: one 64-bit draw gives the layer (8 bits), the sign (1 bit)
 * and a 53-bit uniform, so layer and value are independent. Most samples cost one draw and a
 * multiply; the wedges use exp and the tail Marsaglia's exact tail method.
 *
 * <p>Floating-point defence: each sample returned is (n1 + n2) / sqrt(2) with n1 and n2 two
 * independent normals, the defence of Holohan and Braghin, "Secure Random Sampling in Differential
 * Privacy", ESORICS 2021 (as adopted by IBM's diffprivlib): a single sample leaves gaps in the set
 * of reachable doubles that let an attacker who sees x + noise rule out values of x (Mironov 2012's
 * floating-point attack, adapted to the Gaussian); the sum fills those gaps. {@link StrictMath}
 * keeps every sample bit-identical on every JVM, which keyed replay relies on.
 */
final class ChaChaGaussianStream implements NoiseStream {
  private static final double INV_SQRT2 = 1 / Math.sqrt(2);
  private static final double UNIT = 0x1p-53;
  private static final int LAYERS = 256;

  /** Start of the tail, for 256 layers (Marsaglia and Tsang 2000; also numpy's ziggurat). */
  private static final double R = 3.6541528853610088;

  /** Area of each layer under the unnormalised density exp(-x^2 / 2). */
  private static final double V = 4.92867323399e-3;

  /** X[i] is the right edge of layer i; X[0] = V / f(R) is the base layer's stretched width. */
  private static final double[] X = new double[LAYERS + 1];

  /** F[i] = f(X[i]). */
  private static final double[] F = new double[LAYERS + 1];

  static {
    X[0] = V / density(R);
    X[1] = R;
    for (int i = 1; i < LAYERS; i++) {
      X[i + 1] =
          i == LAYERS - 1 ? 0 : StrictMath.sqrt(-2 * StrictMath.log(V / X[i] + density(X[i])));
    }
    for (int i = 0; i <= LAYERS; i++) {
      F[i] = density(X[i]);
    }
    // The layers must stack exactly to the mode: the top layer's area has to be V as well.
    double topArea = X[LAYERS - 1] * (1 - F[LAYERS - 1]);
    if (Math.abs(topArea / V - 1) > 1e-6) {
      throw new ExceptionInInitializerError("ziggurat table does not close: top layer " + topArea);
    }
  }

  private final ChaCha bits;

  ChaChaGaussianStream(ChaCha bits) {
    this.bits = bits;
  }

  @Override
  public double nextStandardNormal() {
    return (ziggurat() + ziggurat()) * INV_SQRT2;
  }

  private double ziggurat() {
    while (true) {
      long draw = bits.nextLong();
      int layer = (int) (draw & 0xff);
      double u = (draw >>> 11) * UNIT; // uniform in [0, 1), independent of layer and sign bits
      double sign = (draw & 0x100) == 0 ? 1.0 : -1.0;
      double x = u * X[layer];
      if (x < X[layer + 1]) {
        return sign * x; // inside the part of the layer that lies wholly under the curve
      }
      if (layer == 0) {
        return sign * tail();
      }
      double y = F[layer] + uniform() * (F[layer + 1] - F[layer]);
      if (y < density(x)) {
        return sign * x; // wedge accepted
      }
    }
  }

  /** Marsaglia's exact sampler for the normal tail beyond R. */
  private double tail() {
    while (true) {
      double a = -StrictMath.log(uniformOpenAtZero()) / R;
      double b = -StrictMath.log(uniformOpenAtZero());
      if (b + b > a * a) {
        return R + a;
      }
    }
  }

  @Override
  public double nextUniform() {
    return uniform();
  }

  private double uniform() {
    return (bits.nextLong() >>> 11) * UNIT;
  }

  /** Uniform in (0, 1], so its log is finite. */
  private double uniformOpenAtZero() {
    return ((bits.nextLong() >>> 11) + 1) * UNIT;
  }

  private static double density(double x) {
    return StrictMath.exp(-0.5 * x * x);
  }
}
