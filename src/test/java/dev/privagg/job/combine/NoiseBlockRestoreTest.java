package dev.privagg.job.combine;

import static dev.privagg.job.combine.NoiseBlockFixtures.bltSpec;
import static dev.privagg.job.combine.NoiseBlockFixtures.harness;
import static dev.privagg.job.combine.NoiseBlockFixtures.request;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.spec.JobSpec;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.junit.jupiter.api.Test;

/** what a restore under a changed spec does to the noise blocks. */
class NoiseBlockRestoreTest {
  private static OperatorSubtaskState twoRounds(JobSpec spec) throws Exception {
    try (var h = harness(spec, null)) {
      for (long r = 1; r <= 2; r++) {
        for (int b = 0; b < NoiseBlocks.blocks(spec); b++) {
          h.processElement(request(spec, r, b), 0);
        }
      }
      return h.snapshot(1, 1);
    }
  }

  /**
   * Rounds 1-2 released with 3 blocks; restored with noiseBlocks: 2 (docs/operations.md: "must not
   * change between restores"). The new block keys have no buffers, so round 3's noise is rebuilt
   * from other streams (named "-of-2"): not the (C^-1 Z)_3 of the Z that rounds 1-2 released, and
   * the ledger's increment s_3^2 - s_2^2 no longer covers it. Nothing refuses it.
   */
  @Test
  void aRestoreWithOtherNoiseBlocks_isRefused() throws Exception {
    OperatorSubtaskState state = twoRounds(bltSpec(3, "0.9", 3));
    JobSpec changed = bltSpec(2, "0.9", 3);
    try (var h = harness(changed, state)) {
      assertThatThrownBy(() -> h.processElement(request(changed, 3, 0), 0))
          .as("round 3 generated from buffers that never saw rounds 1-2's Z")
          .rootCause()
          .hasMessageContaining("noise block 0 of 2 has no buffers for round 3");
    }
  }

  /**
   * The same with a changed BLT too: docs/operations.md says a changed BLT "is refused when a block
   * next runs", but with the block count changed the refusal never runs (no buffers to compare).
   */
  @Test
  void aRestoreWithAnotherBlt_isRefused_evenWhenTheBlockCountChangedToo() throws Exception {
    OperatorSubtaskState state = twoRounds(bltSpec(3, "0.9", 3));
    JobSpec changed = bltSpec(2, "0.8", 3);
    try (var h = harness(changed, state)) {
      assertThatThrownBy(() -> h.processElement(request(changed, 3, 0), 0))
          .rootCause()
          .hasMessageContaining("restore with the spec it started with");
    }
  }
}
