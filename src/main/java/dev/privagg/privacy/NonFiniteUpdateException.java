package dev.privagg.privacy;

/** An update held NaN or an infinity. Callers turn it into a reject; it never reaches a sum. */
public final class NonFiniteUpdateException extends IllegalArgumentException {
  private final int tensorIndex;
  private final int valueIndex;

  /** The first non-finite value found, by tensor and position within the tensor. */
  public NonFiniteUpdateException(int tensorIndex, int valueIndex, float value) {
    super("tensor " + tensorIndex + " holds " + value + " at index " + valueIndex);
    this.tensorIndex = tensorIndex;
    this.valueIndex = valueIndex;
  }

  /** Index of the tensor holding the first non-finite value. */
  public int tensorIndex() {
    return tensorIndex;
  }

  /** Index of that value within its tensor. */
  public int valueIndex() {
    return valueIndex;
  }
}
