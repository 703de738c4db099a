package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import org.junit.jupiter.api.Test;

/** Each sum's multiplier alone, as the ledger's split and the models' epsilon alone use it. */
class StatisticsStatementTest {
  private static JobSpec spec(String rounds) {
    return JobSpecReader.parse(
        "t",
        """
        jobId: stats
        statistics:
          features: [{name: x, bounds: [0, 1], statistics: [mean]}]
        rounds: {timeout: 10s, expectedClients: 5%s}
        privacy: {noiseMultiplier: 2, delta: 1e-5, budgetEpsilon: 100}
        """
            .formatted(rounds));
  }

  @Test
  void aSumAlone_takesItsShareOfTheSumsPrecision_andTheWholeNoisyCounts() {
    // No count: z / sqrt(share).
    JobSpec plain = spec("");
    double z = 2;
    assertThat(StatisticsStatement.blockMultiplier(plain, z, 0.5))
        .isCloseTo(z / Math.sqrt(0.5), within(1e-12));
    // Replace-one (close early): the sum's charge is z / 2, its share as well.
    JobSpec early = spec(", closeEarly: true");
    double charged = early.roundCharge().chargedNoiseMultiplier(z);
    assertThat(charged).isCloseTo(1, within(1e-12));
    assertThat(StatisticsStatement.blockMultiplier(early, charged, 0.5))
        .isCloseTo(1 / Math.sqrt(0.5), within(1e-12));
    // A noisy minimum cohort: 1 / charged^2 = 1 / z^2 + the count's precision; a block keeps all
    // of the count's and its share of the sum's.
    JobSpec cohort = spec(", minimumCohort: {count: 3, noiseStd: 4}");
    double full = cohort.roundCharge().chargedNoiseMultiplier(z);
    double countPrecision = 1 / (full * full) - 1 / (z * z);
    assertThat(countPrecision).isPositive();
    assertThat(StatisticsStatement.blockMultiplier(cohort, full, 0.5))
        .isCloseTo(1 / Math.sqrt(0.5 / (z * z) + countPrecision), within(1e-12));
    // Never below the round's own charge: a part of the release says no more than the whole.
    assertThat(StatisticsStatement.blockMultiplier(cohort, full, 0.5)).isGreaterThan(full);
  }
}
