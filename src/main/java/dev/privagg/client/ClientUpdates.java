package dev.privagg.client;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.Tensor;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;

/** Builds the bytes of a {@code ClientUpdate} for a job's model, as a client sends them. */
public final class ClientUpdates {
  private ClientUpdates() {}

  /** Encodes {@code tensors} (in the spec's tensor order) as a single-object Avro ClientUpdate. */
  public static byte[] encode(JobSpec spec, long round, String clientId, float[][] tensors) {
    List<JobSpec.TensorSpec> specs = spec.model().tensors();
    if (tensors.length != specs.size()) {
      throw new IllegalArgumentException(
          "the model has " + specs.size() + " tensors, the update " + tensors.length);
    }
    List<Tensor> out = new ArrayList<>();
    for (int t = 0; t < tensors.length; t++) {
      List<Integer> shape = new ArrayList<>();
      for (int dim : specs.get(t).shape()) {
        shape.add(dim);
      }
      out.add(
          new Tensor(specs.get(t).name(), shape, Float32.write(tensors[t], 0, tensors[t].length)));
    }
    return AvroCodec.encode(new ClientUpdate(spec.jobId(), round, clientId, out, null));
  }
}
