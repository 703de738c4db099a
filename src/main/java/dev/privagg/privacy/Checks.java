package dev.privagg.privacy;

/**
 * Parameter checks written as positive conditions, so NaN fails every one of them, with messages
 * that name the parameter, the rule and the value.
 */
public final class Checks {
  private Checks() {}

  /** Requires {@code 0 < value < infinity}. */
  public static double positiveFinite(String name, double value) {
    if (!(value > 0 && Double.isFinite(value))) {
      throw new IllegalArgumentException(name + " must be > 0 and finite, was " + value);
    }
    return value;
  }

  /** Requires {@code 0 <= value < infinity}. */
  public static double nonNegativeFinite(String name, double value) {
    if (!(value >= 0 && Double.isFinite(value))) {
      throw new IllegalArgumentException(name + " must be >= 0 and finite, was " + value);
    }
    return value;
  }

  /** Requires {@code 0 < value < 1}, the range of a meaningful delta. */
  public static double openUnitInterval(String name, double value) {
    if (!(value > 0 && value < 1)) {
      throw new IllegalArgumentException(name + " must be in (0, 1), was " + value);
    }
    return value;
  }

  /** Requires {@code 0 < value <= 1}, the range of a sampling rate. */
  public static double samplingRate(String name, double value) {
    if (!(value > 0 && value <= 1)) {
      throw new IllegalArgumentException(name + " must be in (0, 1], was " + value);
    }
    return value;
  }

  /** Requires {@code value >= 1}. */
  public static long atLeastOne(String name, long value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be >= 1, was " + value);
    }
    return value;
  }
}
