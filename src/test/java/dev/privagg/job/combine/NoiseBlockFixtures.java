package dev.privagg.job.combine;

import dev.privagg.job.NoiseRequest;
import dev.privagg.job.RoundPartial;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;

/** A small BLT job and the noise-block operator's harness, for the noise-block tests. */
final class NoiseBlockFixtures {
  private NoiseBlockFixtures() {}

  /**
   * Job {@code j}: 10 parameters, 20 planned rounds, b = 1, k = 5, a two-buffer BLT whose first
   * theta is {@code theta0}, {@code noiseBlocks} blocks, noise seeded with {@code seed}.
   */
  static JobSpec bltSpec(int noiseBlocks, String theta0, int seed) {
    return JobSpecReader.parse(
        "t",
        """
        jobId: j
        model:
          tensors: [{name: w, shape: [10]}]
        rounds: {timeout: 1s, expectedClients: 2}
        privacy:
          clipNorm: 1.0
          delta: 1.0e-5
          budgetEpsilon: .inf
          accountant: rdp
          mechanism: blt
          blt: {minSeparation: 1, maxParticipations: 5, theta: [%s, 0.4], omega: [0.2, 0.15], noiseBlocks: %d}
          plannedRounds: 20
          noiseMultiplier: 1.0
          noise: {source: seeded, seed: %d}
        """
            .formatted(theta0, noiseBlocks, seed));
  }

  /** The noise-block operator of {@code spec}, restored from {@code restore} unless null. */
  static KeyedOneInputStreamOperatorTestHarness<String, NoiseRequest, RoundPartial> harness(
      JobSpec spec, OperatorSubtaskState restore) throws Exception {
    var h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new NoiseBlockFunction(List.of(spec), Map.of())),
            r -> r.blockKey,
            Types.STRING);
    if (restore != null) {
      h.initializeState(restore);
    }
    h.open();
    return h;
  }

  /** The request for block {@code block}'s noise of {@code round}, after a released round. */
  static NoiseRequest request(JobSpec spec, long round, int block) {
    return new NoiseRequest(spec.jobId(), round, block, NoiseBlocks.key(spec, block), false);
  }

  /** The request for block {@code block}'s noise of {@code round}, before any released round. */
  static NoiseRequest requestBeforeAnyRelease(JobSpec spec, long round, int block) {
    return new NoiseRequest(spec.jobId(), round, block, NoiseBlocks.key(spec, block), true);
  }
}
