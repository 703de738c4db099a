package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.spec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import org.junit.jupiter.api.Test;

/**
 * Rounds of a blt job charged as SKIPPED (announced by an earlier run, deadline passed) pass their
 * Z through the noise blocks' buffers like any other round, the first one included: the next
 * released round carries the noise a run that released every round would have released then.
 */
class CorrelatedSkippedRoundsTest {
  private static final JobSpec SPEC =
      spec(
          """
          mechanism: blt
          blt: {minSeparation: 1, maxParticipations: 5, theta: [0.9, 0.4], omega: [0.2, 0.15]}
          plannedRounds: 10
          noiseMultiplier: 1.0
          budgetEpsilon: .inf
          accountant: rdp
          noise: {source: seeded, seed: 7}""",
          "");
  private static final NoiseSource NOISE = NoiseSources.forSpec(SPEC);

  /** A run without skips: the models of rounds 1..{@code rounds}, each moved by noise alone. */
  private static java.util.List<float[]> everyRoundReleased(int rounds) {
    LifecycleDriver reference = LifecycleDriver.releasing();
    reference.start(SPEC, NOISE, LedgerFloor.NONE, 0);
    reference.advanceTo(rounds * TIMEOUT);
    assertThat(reference.decided.released).hasSize(rounds);
    return reference.decided.models;
  }

  /** The noise a release added to its base model (m times the model's step, no updates). */
  private static double[] step(float[] model, float[] base) {
    double[] step = new double[model.length];
    for (int i = 0; i < model.length; i++) {
      step[i] = ((double) model[i] - base[i]) * SPEC.rounds().expectedClients();
    }
    return step;
  }

  /**
   * Issue 32, item 4: a fresh submit after an earlier run announced round 1, never charged it, and
   * its deadline passed charges round 1 as SKIPPED and opens round 2. The noise blocks have no
   * buffers then; round 2's close threw MismatchException ("noise block 0 of 3 has no buffers for
   * round 2"), which suppresses restarts, and the job id could never start again.
   */
  @Test
  void freshSubmitAfterAnUnchargedRound1_skipsIt_andReleasesRound2WithRound1sZPassed() {
    LedgerFloor round1Announced =
        new LedgerFloor(
            LedgerCodec.write(PrivacyLedger.EMPTY),
            1,
            false,
            0,
            SPEC.initialWeights(),
            0,
            new LedgerFloor.Announced(1, 0, TIMEOUT),
            null);
    LifecycleDriver driver = LifecycleDriver.releasing();
    driver.start(SPEC, NOISE, round1Announced, 5 * TIMEOUT);
    driver.advanceTo(6 * TIMEOUT);

    assertThat(driver.decided.skipped).containsExactly(1L);
    assertThat(driver.decided.released).containsExactly(2L);
    java.util.List<float[]> reference = everyRoundReleased(2);
    assertThat(step(driver.decided.models.get(0), SPEC.initialWeights()))
        .containsExactly(step(reference.get(1), reference.get(0)), within(1e-5));
  }

  /**
   * Round 1 released; the state restored after another run announced rounds 2 and 3 and their
   * deadlines passed: both are charged as SKIPPED, and round 4 passes their Z through the blocks'
   * buffers on its way.
   */
  @Test
  void restoreAfterLaterRoundsWereAnnouncedElsewhere_skipsThem_andRound4PassesTheirZ() {
    LifecycleDriver driver = LifecycleDriver.releasing();
    driver.start(SPEC, NOISE, LedgerFloor.NONE, 0);
    driver.advanceTo(TIMEOUT);
    assertThat(driver.decided.released).containsExactly(1L);
    float[] model1 = driver.decided.models.get(0);

    LedgerFloor round3Announced =
        new LedgerFloor(
            driver.store.progress().ledger.clone(),
            3,
            false,
            1,
            model1,
            1,
            new LedgerFloor.Announced(3, 2 * TIMEOUT, 3 * TIMEOUT),
            null);
    // The same recorder: the noise blocks and the combiner keep their state, as in a restore.
    driver.start(new RoundLifecycle(SPEC, NOISE, round3Announced), 5 * TIMEOUT);
    driver.advanceTo(6 * TIMEOUT);

    assertThat(driver.decided.skipped).containsExactly(2L, 3L);
    assertThat(driver.decided.released).containsExactly(1L, 4L);
    java.util.List<float[]> reference = everyRoundReleased(4);
    assertThat(step(driver.decided.models.get(1), model1))
        .containsExactly(step(reference.get(3), reference.get(2)), within(1e-5));
  }
}
