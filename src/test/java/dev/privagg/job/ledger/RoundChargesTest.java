package dev.privagg.job.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import org.junit.jupiter.api.Test;

/** How many rounds a budget pays for, from the spec, as the round decider charges them. */
class RoundChargesTest {
  private static final String BLT =
      """
      jobId: blt-job
      model:
        tensors: [{name: w, shape: [4]}]
      rounds:
        timeout: 2s
        expectedClients: 4
      privacy:
        clipNorm: 1.0
        delta: 1e-5
        budgetEpsilon: BUDGET
        mechanism: blt
        blt: {minSeparation: 5, maxParticipations: 2, buffers: 2}
        plannedRounds: 40
        noiseMultiplier: 3
        noise: {source: seeded, seed: 1}
      """;

  private static final String INDEPENDENT =
      """
      jobId: plain
      model:
        tensors: [{name: w, shape: [4]}]
      rounds: {timeout: 2s, expectedClients: 4}
      privacy: {clipNorm: 1.0, delta: 1e-5, noiseMultiplier: 1.5, budgetEpsilon: 20}
      """;

  /** The rounds that fit, found one round at a time as the job opens them. */
  private static long oneAtATime(RoundCharges charges, PrivacyLedger ledger, long lastCharged) {
    long fit = 0;
    for (long r = lastCharged + 1; ; r++) {
      PrivacyEvent next = charges.of(r);
      if (next == null || !charges.fits(ledger, next)) {
        return fit;
      }
      ledger = ledger.append(next);
      fit++;
    }
  }

  @Test
  void independentNoise_fitsAsManyRoundsAsOpeningThemOneByOne() {
    JobSpec spec = JobSpecReader.parse("plain", INDEPENDENT);
    RoundCharges charges = new RoundCharges(spec);
    long fresh = charges.roundsThatFit(PrivacyLedger.EMPTY, 0);
    assertThat(fresh).isBetween(2L, 1000L).isEqualTo(oneAtATime(charges, PrivacyLedger.EMPTY, 0));
    PrivacyLedger three = PrivacyLedger.of(charges.of(1).times(3));
    assertThat(charges.roundsThatFit(three, 3)).isEqualTo(fresh - 3);
    // The forecast is the decider's: the budget takes `fresh` rounds and refuses the next one.
    PrivacyLedger full = PrivacyLedger.of(charges.of(1).times(fresh));
    assertThat(charges.fits(full, charges.of(fresh + 1))).isFalse();
    assertThat(Accountant.named("rdp").epsilon(full, 1e-5).epsilon()).isLessThanOrEqualTo(20);
  }

  @Test
  void correlatedNoise_fitsByItsVaryingCharges_andNeverPastThePlannedRounds() {
    RoundCharges roomy =
        new RoundCharges(JobSpecReader.parse("blt", BLT.replace("BUDGET", "1000")));
    assertThat(roomy.roundsThatFit(PrivacyLedger.EMPTY, 0)).isEqualTo(40);
    assertThat(roomy.of(41)).isNull();
    PrivacyLedger wholeRun = PrivacyLedger.EMPTY;
    for (long r = 1; r <= 40; r++) {
      wholeRun = wholeRun.append(roomy.of(r));
    }
    double full = Accountant.named("rdp").epsilon(wholeRun, 1e-5).epsilon();
    for (double share : new double[] {0.75, 0.9, 0.99}) {
      String budget = Double.toString(full * share);
      RoundCharges charges =
          new RoundCharges(JobSpecReader.parse("blt", BLT.replace("BUDGET", budget)));
      long bisected = charges.roundsThatFit(PrivacyLedger.EMPTY, 0);
      assertThat(bisected)
          .as("budget " + budget)
          .isEqualTo(oneAtATime(charges, PrivacyLedger.EMPTY, 0))
          .isBetween(1L, 39L);
      PrivacyLedger some = PrivacyLedger.EMPTY.append(charges.of(1)).append(charges.of(2));
      assertThat(charges.roundsThatFit(some, 2)).isEqualTo(oneAtATime(charges, some, 2));
    }
  }
}
