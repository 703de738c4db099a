package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.job.ClosedRound;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.decode.UpdateValidator;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import org.junit.jupiter.api.Test;

/**
 * Adaptive clipping through the round decider, a shard and the combiner, without Flink: the decider
 * counts the members C leaves unclipped, the noisy fraction moves C for the next round (Andrew et
 * al. 2021, Alg. 1), the shards clip that round to the new C and the combiner decodes and noises
 * its sum at it. Count noise is zero here (a zero noise source), so every C is exact.
 */
class AdaptiveClippingRoundsTest {
  private final LifecycleDriver job = LifecycleDriver.releasing();

  private static JobSpec adaptive(double targetQuantile) {
    return spec(
        """
        noiseMultiplier: 0
        budgetEpsilon: .inf
        adaptiveClipping: {targetQuantile: %s, learningRate: 0.2, countNoiseStd: 1.0}
        """
            .formatted(targetQuantile)
            .strip(),
        "");
  }

  private void start(JobSpec spec, LedgerFloor floor) {
    job.start(spec, NoiseSource.zero(), floor, 0);
  }

  /** An update as the decoder hands it to the decider of an adaptive job: with its L2 norm. */
  private void read(String client, long round, float w0, float w1, long appended) {
    DecodedUpdate update = update(client, round, w0, w1, 0f);
    update.norm = UpdateValidator.l2Norm(update.tensorData);
    job.read(update, appended);
  }

  private void advanceTo(long time) {
    job.advanceTo(time);
  }

  /** What an earlier run left: {@code rounds} rounds charged, the last one's next C. */
  private static LedgerFloor chargedThrough(JobSpec spec, long rounds, double nextClipNorm) {
    return new LedgerFloor(
        LedgerCodec.write(PrivacyLedger.of(spec.roundCharge().event(0, rounds))),
        rounds,
        false,
        rounds,
        spec.initialWeights(),
        rounds,
        null,
        spec.roundCharge().event(0, 1),
        nextClipNorm,
        null);
  }

  @Test
  void everyUpdateClipped_underTarget09_growsCForTheNextRound_whichClipsToTheNewC() {
    start(adaptive(0.9), LedgerFloor.NONE);
    read("a", 1, 3f, 4f, 10); // norm 5 > C = 1
    read("b", 1, 3f, 4f, 20);
    advanceTo(TIMEOUT);
    // No member unclipped: b~ = (0 - 2/2 + 0 + m/2) / m = 0 < 0.9, so C grows by exp(0.2 * 0.9).
    double grown = Math.exp(0.2 * 0.9);
    ClosedRound first = job.decided.closed.get(0);
    assertThat(first.clipping().clipNorm()).isEqualTo(1.0);
    assertThat(first.clipping().noisyUnclippedFraction()).isCloseTo(0.0, within(1e-12));
    assertThat(first.clipping().nextClipNorm()).isCloseTo(grown, within(1e-12));
    assertThat(job.decided.announcedClipNorms.get(1)).isCloseTo(grown, within(1e-12));

    read("a", 2, 3f, 4f, TIMEOUT + 10);
    read("b", 2, 3f, 4f, TIMEOUT + 20);
    advanceTo(2 * TIMEOUT);
    // Round 1: two updates clipped to norm 1 over m = 2 move w by (0.6, 0.8); round 2 clips them
    // to the grown C, and the combiner decodes the shard's units at that C.
    float[] afterOne = job.decided.models.get(0);
    float[] afterTwo = job.decided.models.get(1);
    assertThat(afterOne[0]).isCloseTo(0.6f, within(1e-6f));
    assertThat(afterOne[1]).isCloseTo(0.8f, within(1e-6f));
    assertThat(afterTwo[0] - afterOne[0]).isCloseTo((float) (0.6 * grown), within(1e-6f));
    assertThat(afterTwo[1] - afterOne[1]).isCloseTo((float) (0.8 * grown), within(1e-6f));
  }

  @Test
  void everyUpdateUnclipped_underTarget05_shrinksC() {
    start(adaptive(0.5), LedgerFloor.NONE);
    read("a", 1, 0.1f, 0f, 10);
    read("b", 1, 0f, 0.1f, 20);
    advanceTo(TIMEOUT);
    // b~ = (2 - 1 + 0 + 1) / 2 = 1 > 0.5: C shrinks by exp(-0.2 * 0.5).
    assertThat(job.decided.closed.get(0).clipping().noisyUnclippedFraction())
        .isCloseTo(1.0, within(1e-12));
    assertThat(job.decided.announcedClipNorms.get(1)).isCloseTo(Math.exp(-0.1), within(1e-12));
  }

  @Test
  void emptyRound_countsWithTheDataIndependentDenominator_andMovesCOnlyByTheTarget() {
    start(adaptive(0.5), LedgerFloor.NONE);
    advanceTo(TIMEOUT);
    // No member: b~ = (0 - 0 + 0 + m/2) / m = 1/2, exactly the target, so C stays.
    assertThat(job.decided.closed.get(0).clipping().noisyUnclippedFraction())
        .isCloseTo(0.5, within(1e-12));
    assertThat(job.decided.announcedClipNorms).containsExactly(1.0, 1.0);
  }

  @Test
  void freshStartAfterLostState_continuesFromTheLedgersNextClipNorm() {
    JobSpec spec = adaptive(0.5);
    LedgerFloor floor = chargedThrough(spec, 1, 2.5);
    start(spec, floor);
    assertThat(job.decided.announced).containsExactly("2 until " + TIMEOUT);
    assertThat(job.decided.announcedClipNorms).containsExactly(2.5);
  }

  @Test
  void aCFromTheLedgerOutsideTheSpecsRange_isClampedToIt_notUsedForARound() {
    // The operator narrowed [minClipNorm, maxClipNorm] after C ran up to 2.5, then started again:
    // no round may be clipped (and noised) at a C the spec refuses.
    JobSpec spec =
        spec(
            """
            noiseMultiplier: 0
            budgetEpsilon: .inf
            adaptiveClipping: {targetQuantile: 0.5, countNoiseStd: 1.0, maxClipNorm: 2.0}
            """
                .strip(),
            "");
    LedgerFloor floor = chargedThrough(spec, 1, 2.5);
    start(spec, floor);
    assertThat(job.decided.announcedClipNorms).containsExactly(2.0);
  }

  @Test
  void restoreBehindALedgerWhoseLatestRoundClippedFixed_startsAgainFromTheSpecsC() {
    JobSpec spec = adaptive(0.9);
    start(spec, LedgerFloor.NONE);
    read("a", 1, 3f, 4f, 10);
    advanceTo(TIMEOUT); // C grows: the state now holds exp(0.18)
    assertThat(job.store.progress().clipNorm).isGreaterThan(1.0);
    // A later run (adaptive clipping off) charged rounds 2 and 3 at a fixed C; this older state
    // is restored under the adaptive spec again: the ledger's latest round says no adaptive C.
    LedgerFloor ahead = chargedThrough(spec, 3, 0);
    job.start(spec, NoiseSource.zero(), ahead, 5 * TIMEOUT);
    assertThat(job.decided.announcedClipNorms).containsExactly(1.0);
  }

  @Test
  void fixedClipNorm_neverMoves_andUpdatesWithoutANormAreNotCounted() {
    JobSpec spec = spec("noiseMultiplier: 0\nbudgetEpsilon: .inf", "");
    start(spec, LedgerFloor.NONE);
    read("a", 1, 3f, 4f, 10);
    advanceTo(3 * TIMEOUT);
    assertThat(job.decided.announcedClipNorms).containsOnly(1.0);
    assertThat(job.decided.closed)
        .allSatisfy(c -> assertThat(c.clipping().nextClipNorm()).isNull());
  }

  @Test
  void roundCharge_composesTheUnclippedCountWithTheSum() {
    JobSpec spec =
        spec(
            "noiseMultiplier: 1.1\nbudgetEpsilon: 10\n"
                + "adaptiveClipping: {targetQuantile: 0.5, countNoiseStd: 1.0}",
            "");
    // Andrew et al. 2021, Sec. 3.1: (z^-2 + (2 sigma_b)^-2)^(-1/2) with z = 1.1, sigma_b = 1.
    PrivacyEvent event = spec.roundCharge().event(1.1, 1);
    assertThat(event.noiseMultiplier())
        .isCloseTo(1 / Math.sqrt(1 / (1.1 * 1.1) + 1 / 4.0), within(1e-12));
  }
}
