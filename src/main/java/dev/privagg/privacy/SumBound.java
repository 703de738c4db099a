package dev.privagg.privacy;

/**
 * Bounds a sum the server could not clip term by term (secure aggregation: clients clip their own
 * updates). m honest clients clipped to C sum to a norm of at most m C; a larger norm proves that
 * some client sent more, and scaling the sum back to m C caps what such clients can move the model
 * by. Honest clients' privacy never depends on it: their own updates are clipped and noised.
 */
public final class SumBound {
  private SumBound() {}

  /**
   * {@code sum} scaled down to L2 norm {@code contributions * clipNorm} if it is longer (in place);
   * returns whether it was.
   */
  public static boolean scaleToNorm(double[] sum, long contributions, double clipNorm) {
    double limit = contributions * clipNorm;
    double squares = 0;
    for (double v : sum) {
      squares += v * v;
    }
    double norm = Math.sqrt(squares);
    if (!(norm > limit)) {
      return false;
    }
    double scale = limit / norm;
    for (int i = 0; i < sum.length; i++) {
      sum[i] *= scale;
    }
    return true;
  }
}
