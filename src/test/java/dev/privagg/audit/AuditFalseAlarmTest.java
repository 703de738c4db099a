package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.audit.AuditReport.Verdict;
import dev.privagg.audit.CanaryScorer.Statistic;
import org.junit.jupiter.api.Test;

/**
 * The verdict on correct jobs ({@link HonestAudits}: the canaries' scores as a Gaussian mechanism
 * at the ledger's noise makes them, fixed seeds). The figures for the docs, with more runs, come
 * from {@code AuditFalseAlarmRates}.
 */
class AuditFalseAlarmTest {
  /**
   * The job of the report that found the false alarms: 250 canaries in every one of 8 rounds, delta
   * 1e-5, a ledger of epsilon 6.57 (z = 2.0008) and canaries hidden by a little more than the
   * noise, so that their own separation is epsilon 5.76. The verdict before this test read
   * epsilon-hat's bootstrap interval, spreads fitted apart, and flagged 6 of these 200 runs (exit
   * 3; 4.6% of 1,000 in AuditFalseAlarmRates). The equal-spread estimate averages the canaries'
   * separation, and its low end exceeds the claim with probability Phi(-(1.96 + 1.52)) = 2.5e-4 per
   * run (its standard error is 0.098 in mu, the claim's mu 1.52 of them above the canaries'), so 3
   * or more of 200 runs flag with probability 2e-5, while a rate of 5.5% passes with probability
   * 1e-3. And 250 canaries can refute at most epsilon 4.17, so a run that flags nothing is
   * inconclusive, not consistent as it was.
   */
  @Test
  void anHonestJob_isRarelyFlagged_andInconclusiveWhenItsCanariesCannotRefuteItsClaim() {
    HonestAudits.Setting job = new HonestAudits.Setting(250, 8, 2.0008, 2.2359, 1e-5);
    assertThat(job.ledgerEpsilon()).isCloseTo(6.57, within(0.01));
    assertThat(job.canaryEpsilon()).isCloseTo(5.76, within(0.01));
    HonestAudits.Tally tally = HonestAudits.run(job, Statistic.SUM, 0.05, 200, 32);
    assertThat(tally.flagged()).as("%s", tally).isLessThanOrEqualTo(2);
    assertThat(tally.verdicts().get(Verdict.INCONCLUSIVE)).isEqualTo(200 - tally.flagged());
    assertThat(tally.meanEqualSpreadEpsilon()).isCloseTo(job.canaryEpsilon(), within(0.2));
  }

  /**
   * 500 canaries, 8 rounds at z = 4 (epsilon 2.94 at delta 1e-5, below the 4.74 they can refute),
   * canaries hidden by 5% more than the noise: the equal-spread low end flags a run with
   * probability Phi(-(1.96 + 0.52)) = 0.0066 and the f-DP bound, valid at 0.025, did not come near
   * the claim in any run measured, so 6 or more flags of 100 runs have probability 6e-5 (the
   * verdict before flagged 19 of these 100 runs). Every other run is consistent.
   */
  @Test
  void anHonestJob_whoseClaimTheCanariesCouldRefute_isConsistent() {
    HonestAudits.Setting job = new HonestAudits.Setting(500, 8, 4, 4.2, 1e-5);
    assertThat(job.ledgerEpsilon()).isCloseTo(2.94, within(0.01));
    assertThat(AuditReport.refutableEpsilon(500, 0.05, 1e-5)).isCloseTo(4.74, within(0.01));
    HonestAudits.Tally tally = HonestAudits.run(job, Statistic.SUM, 0.05, 100, 33);
    assertThat(tally.flagged()).as("%s", tally).isLessThanOrEqualTo(5);
    assertThat(tally.verdicts().get(Verdict.CONSISTENT)).isEqualTo(100 - tally.flagged());
  }
}
