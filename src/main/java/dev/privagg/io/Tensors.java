package dev.privagg.io;

import dev.privagg.avro.Tensor;
import java.util.ArrayList;
import java.util.List;

/** Between a model's Avro {@code Tensor} records and flat float32 values in spec order. */
public final class Tensors {
  private Tensors() {}

  /**
   * One Avro tensor named {@code name} of {@code shape}, from {@code size} values at {@code offset}
   * ({@code size} is the shape's product, which the caller has checked).
   */
  public static Tensor of(String name, int[] shape, int size, float[] values, int offset) {
    List<Integer> dims = new ArrayList<>();
    for (int dim : shape) {
      dims.add(dim);
    }
    return new Tensor(name, dims, Float32.write(values, offset, size));
  }

  /** All tensors' values concatenated in order. */
  public static float[] flatten(List<Tensor> tensors) {
    int n = tensors.stream().mapToInt(t -> t.getData().remaining() / 4).sum();
    float[] out = new float[n];
    int offset = 0;
    for (Tensor t : tensors) {
      int count = t.getData().remaining() / 4;
      Float32.read(t.getData(), out, offset, count);
      offset += count;
    }
    return out;
  }

  /**
   * Each Avro tensor as a named float32 tensor; its data must hold exactly its shape's values
   * (models from the job always do).
   */
  public static List<FloatTensor> toFloatTensors(List<Tensor> tensors) {
    List<FloatTensor> out = new ArrayList<>();
    for (Tensor t : tensors) {
      int[] shape = t.getShape().stream().mapToInt(Integer::intValue).toArray();
      float[] values = new float[t.getData().remaining() / 4];
      Float32.read(t.getData(), values, 0, values.length);
      out.add(new FloatTensor(t.getName(), shape, values));
    }
    return out;
  }
}
