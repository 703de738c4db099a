package dev.privagg.sim;

/** Numbers for people: short, but never rounding a privacy figure down to zero. */
public final class NumberText {
  private NumberText() {}

  /**
   * Whole numbers without a decimal point, others to six significant digits without trailing 0s.
   */
  public static String of(double value) {
    if (Double.isInfinite(value) || Double.isNaN(value)) {
      return Double.toString(value);
    }
    if (value == Math.rint(value) && Math.abs(value) < 1e15) {
      return Long.toString((long) value);
    }
    return String.format("%.6g", value).replaceFirst("\\.?0+(e|$)", "$1");
  }
}
