package dev.privagg.io;

import dev.privagg.avro.Tensor;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;

/** Between a model's Avro {@code Tensor} records and flat float32 values in spec order. */
public final class Tensors {
  private Tensors() {}

  /** One Avro tensor shaped as {@code spec}, from {@code spec.size()} values at {@code offset}. */
  public static Tensor of(JobSpec.TensorSpec spec, float[] values, int offset) {
    List<Integer> shape = new ArrayList<>();
    for (int dim : spec.shape()) {
      shape.add(dim);
    }
    return new Tensor(spec.name(), shape, Float32.write(values, offset, spec.size()));
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
}
