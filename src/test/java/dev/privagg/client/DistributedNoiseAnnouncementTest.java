package dev.privagg.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.DistributedNoise;
import dev.privagg.secagg.DistributedNoisePlan;
import org.junit.jupiter.api.Test;

/**
 * A lying job's announcement of distributed noise, against the plan the client's spec makes: the
 * client masks only when the announced shares give the spec's fewest honest inputs at least the
 * spec's noise multiplier over the announced sensitivity.
 */
class DistributedNoiseAnnouncementTest {
  private static final DistributedNoisePlan PLANNED =
      DistributedNoisePlan.plan(1.0, 650, 18, 40, 100);

  private static DistributedNoise announced(
      long maxSquaredNorm, long varianceNumerator, int noiseShares, int dimension) {
    return new DistributedNoise(
        PLANNED.bits(),
        dimension,
        PLANNED.paddedDimension(),
        PLANNED.unitsPerClipNorm(),
        maxSquaredNorm,
        varianceNumerator,
        PLANNED.varianceDenominator(),
        noiseShares);
  }

  @Test
  void theJobsOwnPlanPasses() {
    assertThat(
            SecureRoundClient.announcementProblem(
                PLANNED,
                announced(
                    PLANNED.maxSquaredNorm(),
                    PLANNED.varianceNumerator(),
                    PLANNED.noiseShares(),
                    650)))
        .isNull();
  }

  @Test
  void lessNoiseALargerSensitivityOrMoreClaimedSharesAreRefused() {
    assertThat(
            SecureRoundClient.announcementProblem(
                PLANNED,
                announced(
                    PLANNED.maxSquaredNorm(),
                    PLANNED.varianceNumerator() / 2,
                    PLANNED.noiseShares(),
                    650)))
        .contains("below the spec's");
    assertThat(
            SecureRoundClient.announcementProblem(
                PLANNED,
                announced(
                    PLANNED.maxSquaredNorm() * 2,
                    PLANNED.varianceNumerator(),
                    PLANNED.noiseShares(),
                    650)))
        .contains("below the spec's");
    // The job's claim of more honest shares is not what the client counts on: its own n_min is.
    assertThat(
            SecureRoundClient.announcementProblem(
                PLANNED,
                announced(
                    PLANNED.maxSquaredNorm(), PLANNED.varianceNumerator() * 40 / 80, 80, 650)))
        .contains("below the spec's");
  }

  @Test
  void noiseWhereTheSpecPlansNoneOrNoneWhereItPlansSomeIsRefused() {
    assertThat(SecureRoundClient.announcementProblem(PLANNED, null))
        .contains("announces no distributed noise");
    assertThat(
            SecureRoundClient.announcementProblem(
                null, announced(PLANNED.maxSquaredNorm(), PLANNED.varianceNumerator(), 40, 650)))
        .contains("does not plan");
    assertThat(
            SecureRoundClient.announcementProblem(
                PLANNED, announced(PLANNED.maxSquaredNorm(), PLANNED.varianceNumerator(), 40, 64)))
        .contains("the model has 650");
  }
}
