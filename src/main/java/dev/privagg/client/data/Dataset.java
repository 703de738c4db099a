package dev.privagg.client.data;

import java.util.Arrays;

/** Labelled examples: one feature row and one class label (0..numClasses-1) per example. */
public record Dataset(String name, double[][] features, int[] labels, int numClasses) {
  /** Checks that rows and labels match. */
  public Dataset {
    if (features.length != labels.length) {
      throw new IllegalArgumentException(
          features.length + " feature rows but " + labels.length + " labels");
    }
  }

  public int size() {
    return labels.length;
  }

  public int numFeatures() {
    return features.length == 0 ? 0 : features[0].length;
  }

  /** The examples at {@code indices}, in that order. */
  public Dataset subset(int[] indices) {
    double[][] x = new double[indices.length][];
    int[] y = new int[indices.length];
    for (int i = 0; i < indices.length; i++) {
      x[i] = features[indices[i]];
      y[i] = labels[indices[i]];
    }
    return new Dataset(name, x, y, numClasses);
  }

  @Override
  public String toString() {
    return name + "[" + size() + " x " + numFeatures() + ", " + numClasses + " classes]";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Dataset d
        && name.equals(d.name)
        && Arrays.deepEquals(features, d.features)
        && Arrays.equals(labels, d.labels);
  }

  @Override
  public int hashCode() {
    return name.hashCode() * 31 + Arrays.hashCode(labels);
  }
}
