package dev.privagg.cli;

/** Number formatting for people: short, but never rounding a privacy figure down to zero. */
final class Text {
  private Text() {}

  static String number(double value) {
    if (Double.isInfinite(value) || Double.isNaN(value)) {
      return Double.toString(value);
    }
    if (value == Math.rint(value) && Math.abs(value) < 1e15) {
      return Long.toString((long) value);
    }
    return String.format("%.6g", value).replaceFirst("\\.?0+(e|$)", "$1");
  }
}
