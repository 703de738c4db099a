package dev.privagg.job.combine;

import static dev.privagg.job.combine.NoiseBlockFixtures.bltSpec;
import static dev.privagg.job.combine.NoiseBlockFixtures.harness;
import static dev.privagg.job.combine.NoiseBlockFixtures.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.NoiseBuffers;
import dev.privagg.job.RoundPartial;
import dev.privagg.spec.JobSpec;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.junit.jupiter.api.Test;

/** The noise blocks of correlated noise: a replay from a checkpoint gives the same noise. */
class NoiseBlockFunctionTest {
  @Test
  void aRoundReplayedFromACheckpoint_getsTheSameNoise_andTheBlocksCoverTheModelOnce()
      throws Exception {
    JobSpec spec = bltSpec(3, "0.9", 3);
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
    JobSpec spec = bltSpec(3, "0.9", 3);
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
    JobSpec spec = bltSpec(3, "0.9", 3);
    NoiseBlocks blocks = new NoiseBlocks(spec, NoiseSources.forSpec(spec));
    NoiseBuffers atRound2 = blocks.generate(blocks.generate(null, 0, 1).buffers(), 0, 2).buffers();
    assertThatThrownBy(() -> blocks.generate(atRound2, 0, 2))
        .isInstanceOf(CorrelatedNoise.MismatchException.class)
        .hasMessageContaining("noise block 0 is at round 2, at or past round 2");
    JobSpec otherSeed = bltSpec(3, "0.9", 4);
    NoiseBlocks other = new NoiseBlocks(otherSeed, NoiseSources.forSpec(otherSeed));
    NoiseBuffers changed = blocks.generate(null, 0, 1).buffers();
    changed.mechanism = changed.mechanism.replace("theta=[0.9", "theta=[0.8");
    assertThatThrownBy(() -> other.generate(changed, 0, 2))
        .isInstanceOf(CorrelatedNoise.MismatchException.class)
        .hasMessageContaining("restore with the spec it started with");
  }
}
