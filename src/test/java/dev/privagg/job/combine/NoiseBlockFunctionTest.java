package dev.privagg.job.combine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.NoiseBuffers;
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
import org.junit.jupiter.api.Test;

/** The noise blocks of correlated noise: a replay from a checkpoint gives the same noise. */
class NoiseBlockFunctionTest {
  private static JobSpec spec(String extra) {
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
          blt: {minSeparation: 1, maxParticipations: 5, theta: [0.9, 0.4], omega: [0.2, 0.15], noiseBlocks: 3}
          plannedRounds: 20
          noiseMultiplier: 1.0
          noise: {source: seeded, seed: %s}
        """
            .formatted(extra));
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, NoiseRequest, RoundPartial> harness(
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

  private static NoiseRequest request(JobSpec spec, long round, int block) {
    return new NoiseRequest(spec.jobId(), round, block, NoiseBlocks.key(spec, block));
  }

  @Test
  void aRoundReplayedFromACheckpoint_getsTheSameNoise_andTheBlocksCoverTheModelOnce()
      throws Exception {
    JobSpec spec = spec("3");
    List<RoundPartial> first;
    OperatorSubtaskState afterRound1;
    try (var h = harness(spec, null)) {
      for (int b = 0; b < 3; b++) {
        h.processElement(request(spec, 1, b), 0);
      }
      afterRound1 = h.snapshot(1, 1);
      for (int b = 0; b < 3; b++) {
        h.processElement(request(spec, 2, b), 0);
      }
      first = h.extractOutputValues().subList(3, 6);
    }
    try (var h = harness(spec, afterRound1)) {
      for (int b = 0; b < 3; b++) {
        h.processElement(request(spec, 2, b), 0);
      }
      List<RoundPartial> replayed = h.extractOutputValues();
      for (int b = 0; b < 3; b++) {
        assertThat(replayed.get(b).noise).isEqualTo(first.get(b).noise);
        assertThat(replayed.get(b).noiseOffset).isEqualTo(first.get(b).noiseOffset);
      }
    }
    assertThat(first).extracting(p -> p.noiseOffset).containsExactly(0, 3, 6);
    assertThat(first).extracting(p -> p.noise.length).containsExactly(3, 3, 4);
  }

  @Test
  void aBlockThatMissedRounds_catchesUpToTheSameNoise_butOneWithoutBuffersIsRefused() {
    JobSpec spec = spec("3");
    NoiseBlocks blocks = new NoiseBlocks(spec, NoiseSources.forSpec(spec));
    NoiseBuffers state = null;
    RoundPartial stepByStep = null;
    for (long r = 1; r <= 5; r++) {
      NoiseBlocks.Generated g = blocks.generate(state, 1, r);
      state = g.buffers();
      stepByStep = g.partial();
    }
    NoiseBuffers afterRound1 = blocks.generate(null, 1, 1).buffers();
    RoundPartial jumped = blocks.generate(afterRound1, 1, 5).partial();
    assertThat(jumped.noise).isEqualTo(stepByStep.noise);
    assertThatThrownBy(() -> blocks.generate(null, 1, 5))
        .isInstanceOf(CorrelatedNoise.MismatchException.class)
        .hasMessageContaining("noise block 1 of 3 has no buffers for round 5");
  }

  @Test
  void buffersOfAnotherMechanismOrPastTheRound_areRefused() {
    JobSpec spec = spec("3");
    NoiseBlocks blocks = new NoiseBlocks(spec, NoiseSources.forSpec(spec));
    NoiseBuffers atRound2 = blocks.generate(blocks.generate(null, 0, 1).buffers(), 0, 2).buffers();
    assertThatThrownBy(() -> blocks.generate(atRound2, 0, 2))
        .isInstanceOf(CorrelatedNoise.MismatchException.class)
        .hasMessageContaining("noise block 0 is at round 2, at or past round 2");
    JobSpec otherSeed = spec("4");
    NoiseBlocks other = new NoiseBlocks(otherSeed, NoiseSources.forSpec(otherSeed));
    NoiseBuffers changed = blocks.generate(null, 0, 1).buffers();
    changed.mechanism = changed.mechanism.replace("theta=[0.9", "theta=[0.8");
    assertThatThrownBy(() -> other.generate(changed, 0, 2))
        .isInstanceOf(CorrelatedNoise.MismatchException.class)
        .hasMessageContaining("restore with the spec it started with");
  }
}
