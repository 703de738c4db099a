package dev.privagg.job.combine;

import dev.privagg.job.NoiseRequest;
import dev.privagg.job.RoundSignal;
import dev.privagg.spec.JobSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/** Fans each sealed round of a correlated-noise job out to its noise blocks. */
public final class NoiseRequestsFunction implements FlatMapFunction<RoundSignal, NoiseRequest> {
  private final Map<String, JobSpec> specs = new HashMap<>();

  public NoiseRequestsFunction(List<JobSpec> specs) {
    for (JobSpec spec : specs) {
      if (spec.correlated()) {
        this.specs.put(spec.jobId(), spec);
      }
    }
  }

  @Override
  public void flatMap(RoundSignal signal, Collector<NoiseRequest> out) {
    JobSpec spec = specs.get(signal.jobId);
    if (spec == null || signal.kind != RoundSignal.Kind.SEALED) {
      return;
    }
    for (NoiseRequest request : NoiseBlocks.requests(spec, signal)) {
      out.collect(request);
    }
  }
}
