package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.spec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.spec.JobSpec;
import org.junit.jupiter.api.Test;

/** privacy.mechanism: blt through the round lifecycle over a long run and across restores. */
class CorrelatedRestoreTest {
  /**
   * Single participation (k = 1), the optimized one-buffer BLT for n = 20,000: s_t is computed by
   * the closed form of BltLoss.sensitivitySquared, which is not monotone in t once c_t^2 falls
   * below an ulp of s_t^2; chargeOf's roundCharge then throws "cannot shrink" at round 17,518 and
   * the decider fails at every restart.
   */
  @Test
  void singleParticipationRun_chargesEveryPlannedRound_withoutThrowing() {
    JobSpec spec =
        spec(
            """
            mechanism: blt
            blt: {minSeparation: 1, maxParticipations: 1, theta: [0.9991362529805309], omega: [0.05703039782654984]}
            plannedRounds: 20000
            noiseMultiplier: 1.0
            budgetEpsilon: .inf
            accountant: rdp
            noise: {source: seeded, seed: 7}""",
            "");
    LifecycleDriver driver = LifecycleDriver.recording();
    driver.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE), 0);
    driver.advanceTo(20_000 * TIMEOUT + TIMEOUT);
    assertThat(driver.decided.closed).hasSize(20_000);
  }

  /**
   * A job restored from a savepoint of an independent-noise run under mechanism: blt would release
   * round T + 1 with noise sigma (C^-1 Z)_(T+1) from fresh buffers, a Gaussian of std sigma r with
   * r = ||row T+1 of C^-1||, while its ledger would charge only the BLT increment z s_n /
   * sqrt(s_(T+1)^2 - s_T^2): under-charged (3 rounds at z = 2 then this: stated 4.26, at least
   * 4.75). The switch is refused, and so is the way back and any change of the BLT.
   */
  @Test
  void restoringAnIndependentRunAsBlt_orABltRunUnderAnotherBlt_isRefused() {
    JobSpec independent =
        spec(
            """
            noiseMultiplier: 2.0
            budgetEpsilon: .inf
            accountant: rdp
            noise: {source: seeded, seed: 7}""",
            "");
    String bltYaml =
        """
        mechanism: blt
        blt: {minSeparation: 2, maxParticipations: 2, theta: [0.9, 0.4], omega: [0.2, 0.15]}
        plannedRounds: 10
        noiseMultiplier: 1.0
        budgetEpsilon: .inf
        accountant: rdp
        noise: {source: seeded, seed: 7}""";
    JobSpec blt = spec(bltYaml, "");
    LifecycleDriver driver = LifecycleDriver.recording();
    driver.start(
        new RoundLifecycle(independent, NoiseSources.forSpec(independent), LedgerFloor.NONE), 0);
    driver.advanceTo(3 * TIMEOUT); // rounds 1..3 closed and charged at z = 2
    assertThat(driver.decided.closed).hasSize(3);
    assertThatThrownBy(
            () ->
                driver.start(
                    new RoundLifecycle(blt, NoiseSources.forSpec(blt), LedgerFloor.NONE),
                    3 * TIMEOUT))
        .isInstanceOf(RoundLifecycle.MechanismChangedException.class)
        .hasMessageContaining("its rounds were charged under independent")
        .hasMessageContaining("restore with the spec it started with");

    LifecycleDriver bltRun = LifecycleDriver.recording();
    bltRun.start(new RoundLifecycle(blt, NoiseSources.forSpec(blt), LedgerFloor.NONE), 0);
    bltRun.advanceTo(2 * TIMEOUT);
    for (JobSpec changed :
        new JobSpec[] {
          spec(bltYaml.replace("noiseMultiplier: 1.0", "noiseMultiplier: 1.5"), ""),
          spec(bltYaml.replace("maxParticipations: 2", "maxParticipations: 3"), ""),
          spec(bltYaml.replace("omega: [0.2, 0.15]", "omega: [0.2, 0.15], noiseBlocks: 1"), ""),
          independent
        }) {
      assertThatThrownBy(
              () ->
                  bltRun.start(
                      new RoundLifecycle(changed, NoiseSources.forSpec(changed), LedgerFloor.NONE),
                      2 * TIMEOUT))
          .isInstanceOf(RoundLifecycle.MechanismChangedException.class)
          .hasMessageContaining("but this spec asks for");
    }
    // The same spec restores as it was.
    bltRun.start(new RoundLifecycle(blt, NoiseSources.forSpec(blt), LedgerFloor.NONE), 2 * TIMEOUT);
    bltRun.advanceTo(3 * TIMEOUT);
    assertThat(bltRun.decided.closed).hasSize(3);
  }
}
