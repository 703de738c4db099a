package dev.privagg.job.combine;

import static dev.privagg.job.combine.NoiseBlockFixtures.bltSpec;
import static dev.privagg.job.combine.NoiseBlockFixtures.harness;
import static dev.privagg.job.combine.NoiseBlockFixtures.request;
import static dev.privagg.job.combine.NoiseBlockFixtures.requestBeforeAnyRelease;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.NoiseBuffers;
import dev.privagg.job.NoiseRequest;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.RoundSignal;
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
      NoiseBlocks.Generated g = blocks.generate(state, request(spec, r, 1));
      state = g.buffers();
      stepByStep = g.partial();
    }
    NoiseBuffers afterRound1 = blocks.generate(null, request(spec, 1, 1)).buffers();
    RoundPartial jumped = blocks.generate(afterRound1, request(spec, 5, 1)).partial();
    assertThat(jumped.noise).isEqualTo(stepByStep.noise);
    assertThatThrownBy(() -> blocks.generate(null, request(spec, 5, 1)))
        .isInstanceOf(CorrelatedNoise.MismatchException.class)
        .hasMessageContaining("noise block 1 of 3 has no buffers for round 5");
  }

  @Test
  void buffersOfAnotherMechanismOrPastTheRound_areRefused() {
    JobSpec spec = bltSpec(3, "0.9", 3);
    NoiseBlocks blocks = new NoiseBlocks(spec, NoiseSources.forSpec(spec));
    NoiseBuffers atRound2 =
        blocks
            .generate(blocks.generate(null, request(spec, 1, 0)).buffers(), request(spec, 2, 0))
            .buffers();
    assertThatThrownBy(() -> blocks.generate(atRound2, request(spec, 2, 0)))
        .isInstanceOf(CorrelatedNoise.MismatchException.class)
        .hasMessageContaining("noise block 0 is at round 2, at or past round 2");
    JobSpec otherSeed = bltSpec(3, "0.9", 4);
    NoiseBlocks other = new NoiseBlocks(otherSeed, NoiseSources.forSpec(otherSeed));
    NoiseBuffers changed = blocks.generate(null, request(spec, 1, 0)).buffers();
    changed.mechanism = changed.mechanism.replace("theta=[0.9", "theta=[0.8");
    assertThatThrownBy(() -> other.generate(changed, request(otherSeed, 2, 0)))
        .isInstanceOf(CorrelatedNoise.MismatchException.class)
        .hasMessageContaining("restore with the spec it started with");
  }

  /** Block {@code block}'s noise of {@code round} after every earlier round's, one at a time. */
  private static RoundPartial stepByStep(NoiseBlocks blocks, JobSpec spec, int block, long round) {
    NoiseBuffers state = null;
    RoundPartial partial = null;
    for (long r = 1; r <= round; r++) {
      NoiseBlocks.Generated g = blocks.generate(state, request(spec, r, block));
      state = g.buffers();
      partial = g.partial();
    }
    return partial;
  }

  /**
   * Issue 32, item 4: rounds charged as SKIPPED before the job's first seal (a fresh submit after
   * an earlier run announced them) leave the blocks without buffers. A block asked for round t
   * before any release starts from round 0 and passes the skipped rounds' Z: the noise a run that
   * sealed every round would have made.
   */
  @Test
  void aBlockWithoutBuffers_beforeAnyRelease_passesTheSkippedRoundsZ_toTheSameNoise() {
    JobSpec spec = bltSpec(3, "0.9", 3);
    NoiseBlocks blocks = new NoiseBlocks(spec, NoiseSources.forSpec(spec));
    for (long round : new long[] {1, 2, 5}) {
      for (int b = 0; b < 3; b++) {
        NoiseBlocks.Generated g = blocks.generate(null, requestBeforeAnyRelease(spec, round, b));
        assertThat(g.buffers().round).isEqualTo(round);
        assertThat(g.partial().noise)
            .as("block %d, round %d", b, round)
            .isEqualTo(stepByStep(blocks, spec, b, round).noise);
      }
    }
  }

  /** Nothing was released before a sealed round when it trains on round 0's model. */
  @Test
  void theRequestsOfASealedRound_sayWhetherARoundBeforeWasReleased() {
    JobSpec spec = bltSpec(3, "0.9", 3);
    RoundSignal sealed = new RoundSignal();
    sealed.kind = RoundSignal.Kind.SEALED;
    sealed.jobId = "j";
    sealed.round = 4;
    sealed.release = true;
    sealed.baseModelRound = 0;
    assertThat(NoiseBlocks.requests(spec, sealed))
        .extracting(r -> r.block + " " + r.blockKey + " " + r.round + " " + r.nothingReleasedBefore)
        .containsExactly(
            "0 j#noise-0-of-3 4 true", "1 j#noise-1-of-3 4 true", "2 j#noise-2-of-3 4 true");
    sealed.baseModelRound = 2;
    assertThat(NoiseBlocks.requests(spec, sealed))
        .extracting(r -> r.nothingReleasedBefore)
        .containsOnly(false);
    sealed.release = false; // withheld: its signal names no model
    sealed.baseModelRound = -1;
    assertThat(NoiseBlocks.requests(spec, sealed))
        .extracting(r -> r.nothingReleasedBefore)
        .containsOnly(false);
  }

  /**
   * The operator after a fresh submit that skipped rounds 1 and 2: round 3 builds the buffers, and
   * round 4 replayed from the checkpoint taken after round 3 gets the same noise as at first, the
   * noise of a run that sealed every round.
   */
  @Test
  void afterSkippedFirstRounds_theFirstSealBuildsTheBuffers_andALaterRoundReplaysAlike()
      throws Exception {
    JobSpec spec = bltSpec(3, "0.9", 3);
    NoiseBlocks blocks = new NoiseBlocks(spec, NoiseSources.forSpec(spec));
    List<RoundPartial> round4;
    OperatorSubtaskState afterRound3;
    try (var h = harness(spec, null)) {
      for (int b = 0; b < 3; b++) {
        h.processElement(requestBeforeAnyRelease(spec, 3, b), 0);
      }
      afterRound3 = h.snapshot(1, 1);
      for (int b = 0; b < 3; b++) {
        h.processElement(request(spec, 4, b), 0);
      }
      round4 = h.extractOutputValues().subList(3, 6);
    }
    try (var h = harness(spec, afterRound3)) {
      for (int b = 0; b < 3; b++) {
        NoiseRequest request = request(spec, 4, b);
        h.processElement(request, 0);
        assertThat(h.extractOutputValues().get(b).noise).isEqualTo(round4.get(b).noise);
        assertThat(round4.get(b).noise).isEqualTo(stepByStep(blocks, spec, b, 4).noise);
      }
    }
  }
}
