package dev.privagg.io;

import java.util.Arrays;

/**
 * One named float32 tensor as a model file holds it: a shape and its values in row-major (C) order.
 *
 * @param name the tensor's name in the file
 * @param shape dimensions, each >= 0; an empty shape is a scalar (one value)
 * @param values {@code product(shape)} values, row-major
 */
public record FloatTensor(String name, int[] shape, float[] values) {
  /** Checks that the values fill the shape exactly. */
  public FloatTensor {
    if (name == null || shape == null || values == null) {
      throw new IllegalArgumentException("name, shape and values must be given");
    }
    long size;
    try {
      size = Shapes.elements(shape);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("tensor '" + name + "' " + e.getMessage());
    }
    if (size != values.length) {
      throw new IllegalArgumentException(
          "tensor '"
              + name
              + "' has shape "
              + Arrays.toString(shape)
              + " ("
              + size
              + " values) but "
              + values.length
              + " values");
    }
  }

  /** The shape as text, e.g. {@code [64, 10]}. */
  public String shapeText() {
    return Arrays.toString(shape);
  }
}
