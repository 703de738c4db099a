package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.spec;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.correlated.Toeplitz;
import dev.privagg.job.ClosedRound;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import org.junit.jupiter.api.Test;

/** Review of privacy.mechanism: blt through the round lifecycle. */
class CorrelatedReviewTest {
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
   * A job restored from a savepoint of an independent-noise run under mechanism: blt (nothing
   * refuses the change): round T + 1 is released with noise sigma (C^-1 Z)_(T+1) from fresh
   * buffers, a Gaussian of std sigma r with r = ||row T+1 of C^-1|| on a sum of sensitivity
   * clipNorm, so it costs at least a Gaussian with multiplier z s_n r. The ledger charges it only
   * the increment z s_n / sqrt(s_(T+1)^2 - s_T^2), as if rounds 1..T had been BLT rounds.
   */
  @Test
  void restoringAnIndependentRunAsBlt_chargesAtLeastWhatTheNextRoundReleases() {
    JobSpec independent =
        spec(
            """
            noiseMultiplier: 2.0
            budgetEpsilon: .inf
            accountant: rdp
            noise: {source: seeded, seed: 7}""",
            "");
    JobSpec blt =
        spec(
            """
            mechanism: blt
            blt: {minSeparation: 2, maxParticipations: 2, theta: [0.9, 0.4], omega: [0.2, 0.15]}
            plannedRounds: 10
            noiseMultiplier: 1.0
            budgetEpsilon: .inf
            accountant: rdp
            noise: {source: seeded, seed: 7}""",
            "");
    LifecycleDriver driver = LifecycleDriver.recording();
    driver.start(
        new RoundLifecycle(independent, NoiseSources.forSpec(independent), LedgerFloor.NONE), 0);
    driver.advanceTo(3 * TIMEOUT); // rounds 1..3 closed and charged at z = 2
    int t = 3;
    assertThat(driver.decided.closed).hasSize(t);
    // Restored from that state (a savepoint) with the blt spec; the ledger topic agrees with it.
    driver.start(new RoundLifecycle(blt, NoiseSources.forSpec(blt), LedgerFloor.NONE), 3 * TIMEOUT);
    driver.advanceTo(4 * TIMEOUT + TIMEOUT);
    ClosedRound round4 = driver.decided.closed.get(t);
    assertThat(round4.round()).isEqualTo(t + 1);

    double sN = blt.privacy().correlated().plannedSensitivity();
    double[] inverse =
        Toeplitz.inverseCoefficients(
            blt.privacy().correlated().strategy().toeplitzCoefficients(10), 10);
    double r2 = 0;
    for (int s = 0; s <= t; s++) { // row t + 1 (index t) of C^-1
      r2 += inverse[s] * inverse[s];
    }
    double roundAlone = 1.0 * sN * Math.sqrt(r2);
    PrivacyLedger atLeast =
        PrivacyLedger.of(PrivacyEvent.gaussian(2.0, t), PrivacyEvent.gaussian(roundAlone, 1));
    double trueEpsilonAtLeast = Accountant.named("rdp").epsilon(atLeast, 1e-5).epsilon();
    assertThat(round4.epsilonSpent())
        .as("epsilon stated after the first blt round vs a lower bound on what was released")
        .isGreaterThanOrEqualTo(trueEpsilonAtLeast);
  }
}
