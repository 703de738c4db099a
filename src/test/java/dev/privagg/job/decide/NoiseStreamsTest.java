package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.readFrom;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.job.ClosedRound;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.combine.NoiseStreams;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import org.junit.jupiter.api.Test;

/**
 * Each draw has its own keyed stream ({@link NoiseStreams}). With one stream per (models topic,
 * job, round) for the decider's counts and the combiner's sum, the combiner skipped the counts'
 * draws by its own spec; a savepoint taken after the decider closed round r (SEALED in the
 * combiner's state, waiting for a partial) and restored under a spec without the minimum-cohort
 * rule made the combiner redraw round r's noise without the skip, so the sum's first coordinate got
 * exactly the normal the count was noised with, a normal the release decision or the next C makes
 * public.
 *
 * <p>Modelled without Flink: the decider runs under the saved spec, the combiner (as restored)
 * under the changed one, with the same keyed source (same key, same deployment nonce).
 */
class NoiseStreamsTest {
  private static final String KEY =
      "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  private static final String NONCE = "0123456789abcdef0123456789abcdef";

  private static JobSpec keyed(String rounds) {
    return spec(
        "noiseMultiplier: 1.0\nbudgetEpsilon: 100\nnoise: {source: keyed, keyEnv: K}", rounds);
  }

  private static NoiseSource source(JobSpec spec) {
    return NoiseSources.forSpec(spec, NONCE, name -> KEY);
  }

  @Test
  void minimumCohortDroppedAcrossARestore_betweenSealAndRelease_sumNoiseIsNotTheCountsNormal() {
    JobSpec saved = keyed("minimumCohort: {count: 1, noiseStd: 0.5}");
    JobSpec restored = keyed("");
    assertThat(released(saved, saved).sumNoise0)
        .as("control: same spec on both sides, the sum skips the count's draw")
        .isNotCloseTo(released(saved, saved).countNormal, within(1e-3));

    Run run = released(saved, restored);
    assertThat(run.sumNoise0)
        .as("sum noise of coordinate 0 (z C = 1) vs the count's normal")
        .isNotCloseTo(run.countNormal, within(1e-3));
  }

  /**
   * The same with adaptive clipping kept: the sum's first coordinate must not reuse the normal of
   * the unclipped count, which set the next round's C (public in the next model's statement).
   */
  @Test
  void minimumCohortDroppedButAdaptiveKept_sumNoiseIsNotTheUnclippedCountsNormal() {
    String adaptive = "\nadaptiveClipping: {targetQuantile: 0.5, countNoiseStd: 1.0}";
    JobSpec saved =
        spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 100\nnoise: {source: keyed, keyEnv: K}"
                + adaptive,
            "minimumCohort: {count: 1, noiseStd: 0.5}");
    JobSpec restored =
        spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 100\nnoise: {source: keyed, keyEnv: K}"
                + adaptive,
            "");
    double unclippedNormal =
        source(saved).forRound(NoiseStreams.unclippedCount(saved), 1).nextStandardNormal();
    assertThat(released(saved, saved).sumNoise0).isNotCloseTo(unclippedNormal, within(1e-3));
    assertThat(released(saved, restored).sumNoise0)
        .as("sum noise of coordinate 0 (z C = 1) vs the unclipped count's normal")
        .isNotCloseTo(unclippedNormal, within(1e-3));
  }

  private record Run(double countNormal, double sumNoise0) {}

  /**
   * Round 1 with three all-zero members: closed by a decider under {@code decider}, computed by a
   * combiner under {@code combiner}.
   */
  private static Run released(JobSpec decider, JobSpec combiner) {
    LifecycleFakes.Store store = new LifecycleFakes.Store();
    LifecycleFakes.Recorder decided =
        LifecycleFakes.Recorder.releasing(combiner, source(combiner), LedgerFloor.NONE);
    RoundLifecycle lifecycle = new RoundLifecycle(decider, source(decider), LedgerFloor.NONE);
    lifecycle.start(store, 0, decided);
    for (int i = 0; i < 3; i++) {
      lifecycle.arrive(
          store, readFrom(0, i, update("c" + i, 1, 0f, 0f, 0f)), 10 + i, 0, 0, decided);
    }
    while (!decided.timers.isEmpty() && decided.timers.first() <= TIMEOUT) {
      lifecycle.eventTimeReached(store, decided.timers.pollFirst(), false, 0, decided);
    }
    ClosedRound closed = decided.closed.get(0);
    double countNormal = (closed.noisyCount() - 3) / 0.5;
    assertThat(decided.models).as("round 1 released").hasSize(1);
    float[] init = combiner.initialWeights();
    // sgd with learning rate 1: model = init + (sum + noise) / m, sum = 0, m = 2.
    double noise0 = (decided.models.get(0)[0] - init[0]) * combiner.rounds().expectedClients();
    return new Run(countNormal, noise0);
  }
}
