package dev.privagg.client;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.Tensor;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Tensors;
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
      if (tensors[t].length != specs.get(t).size()) {
        throw new IllegalArgumentException(
            "tensor '"
                + specs.get(t).name()
                + "' needs "
                + specs.get(t).size()
                + " values, had "
                + tensors[t].length);
      }
      JobSpec.TensorSpec s = specs.get(t);
      out.add(Tensors.of(s.name(), s.shape(), s.size(), tensors[t], 0));
    }
    return AvroCodec.encode(new ClientUpdate(spec.jobId(), round, clientId, out, null));
  }
}
