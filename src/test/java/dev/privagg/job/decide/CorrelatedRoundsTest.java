package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.formerRunCharged;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.job.ClosedRound;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import org.junit.jupiter.api.Test;

/**
 * Correlated noise through the round lifecycle and an in-memory combiner: the participation schema
 * holds by construction, no round runs past the planned ones, epsilon grows to the planned one, and
 * the released noise is sigma C^-1 Z.
 */
class CorrelatedRoundsTest {
  private static final String BLT =
      """
      mechanism: blt
      blt: {minSeparation: 2, maxParticipations: 2, theta: [0.9, 0.4], omega: [0.2, 0.15]}
      plannedRounds: %d
      noiseMultiplier: 1.0
      budgetEpsilon: .inf
      accountant: rdp
      noise: {source: seeded, seed: 7}""";

  private final LifecycleDriver driver = LifecycleDriver.recording();
  private final LifecycleFakes.Recorder decided = driver.decided;

  private void start(JobSpec spec) {
    driver.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE), 0);
  }

  @Test
  void aClientTooSoonOrPastItsLimit_isRejectedWithItsOwnReason() {
    start(spec(BLT.formatted(10), ""));
    driver.read(update("a", 1, 0.1f, 0f, 0f), 10);
    driver.advanceTo(TIMEOUT + 10);
    driver.read(update("a", 2, 0.1f, 0f, 0f), TIMEOUT + 10); // r' - r = 1 < b = 2
    driver.advanceTo(2 * TIMEOUT + 10);
    driver.read(update("a", 3, 0.1f, 0f, 0f), 2 * TIMEOUT + 10); // r' - r = 2: allowed
    driver.advanceTo(4 * TIMEOUT + 10);
    driver.read(update("a", 5, 0.1f, 0f, 0f), 4 * TIMEOUT + 10); // a third time: k = 2
    driver.read(update("b", 5, 0.1f, 0f, 0f), 4 * TIMEOUT + 20);
    driver.advanceTo(5 * TIMEOUT);
    assertThat(decided.admittedFrom)
        .extracting(s -> s.split("@")[0])
        .containsExactly("a", "a", "b");
    assertThat(decided.rejects).containsExactly("a TOO_SOON", "a PARTICIPATION_LIMIT");
    assertThat(driver.store.participations).hasSize(2);
  }

  @Test
  void noRoundRunsPastThePlannedOnes_andEpsilonGrowsToThePlannedOne() {
    JobSpec spec = spec(BLT.formatted(4), "");
    start(spec);
    driver.advanceTo(10 * TIMEOUT);
    assertThat(decided.closed).extracting(ClosedRound::round).containsExactly(1L, 2L, 3L, 4L);
    assertThat(decided.exhausted).containsExactly(5L);
    double[] epsilons = decided.closed.stream().mapToDouble(ClosedRound::epsilonSpent).toArray();
    for (int i = 1; i < epsilons.length; i++) {
      assertThat(epsilons[i]).isGreaterThan(epsilons[i - 1]);
    }
    double planned = CorrelatedNoiseAccounting.epsilon(Accountant.named("rdp"), 1.0, 1e-5);
    assertThat(epsilons[3]).isCloseTo(planned, within(1e-9));
  }

  @Test
  void aStartThatWouldForgetWhoContributed_isRefused_freshOrFromAnOlderState() {
    JobSpec spec = spec(BLT.formatted(10), "");
    LedgerFloor twoRounds = formerRunCharged(spec, 5.0, 2);
    assertThatThrownBy(
            () ->
                driver.start(
                    new RoundLifecycle(spec, NoiseSources.forSpec(spec), twoRounds), 5_000))
        .isInstanceOf(RoundLifecycle.ParticipationsLostException.class)
        .hasMessageContaining("the ledger topic shows 2 charged rounds but the state is empty")
        .hasMessageContaining("--from-savepoint");

    // State saved after round 1, restored while the topics show round 2 charged.
    LifecycleDriver older = LifecycleDriver.recording();
    older.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE), 0);
    older.advanceTo(TIMEOUT);
    assertThatThrownBy(
            () ->
                older.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), twoRounds), 5_000))
        .isInstanceOf(RoundLifecycle.ParticipationsLostException.class)
        .hasMessageContaining("but the state holds 1");
  }

  /**
   * All-zero updates: the released models move by the noise alone, noise_t / m. Applying C to that
   * sequence must give sigma Z: i.i.d. N(0, sigma^2) coordinates, uncorrelated across rounds. 64
   * coordinates x 300 rounds = 19,200 samples; each bound is 5 standard errors, so a correct job
   * fails it with probability below 1e-6 (and this seed is fixed).
   */
  @Test
  void zeroUpdates_cTimesTheReleasedNoise_isIndependentGaussianWithStdSigma() {
    int rounds = 300;
    int d = 64;
    JobSpec spec =
        JobSpecReader.parse(
            "blt-zero",
            """
            jobId: job-a
            model:
              tensors: [{name: w, shape: [%d]}]
            rounds: {timeout: %dms, startGrace: 0ms, expectedClients: 4}
            privacy:
              clipNorm: 0.5
              delta: 1.0e-5
            %s
            """
                .formatted(d, TIMEOUT, BLT.formatted(rounds).indent(2)));
    LifecycleDriver releasing = LifecycleDriver.releasing();
    releasing.start(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE, 0);
    releasing.advanceTo(rounds * TIMEOUT);
    assertThat(releasing.decided.models).hasSize(rounds);

    double rawLag1 =
        ReleasedNoise.assertWhitenedByC(
            releasing.decided.models,
            spec.rounds().expectedClients(),
            spec.privacy().correlated().strategy().toeplitzCoefficients(rounds),
            spec.mechanism(0.5).sigma());
    // The released noise itself is correlated across rounds: the check above can tell.
    assertThat(rawLag1).isLessThan(-ReleasedNoise.clearlyCorrelated(rounds, d));
  }
}
