package dev.privagg.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.DistributedNoise;
import dev.privagg.distributed.DistributedNoisePlan;
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
  void aSensitivityTooSmallForRoundingIsRefused_itWouldTellLargeUpdatesBySilence() {
    // A quarter of the bound passes the noise check (less sensitivity, more noise per B), but
    // rounding would then fail for updates near C and succeed for small ones.
    assertThat(
            SecureRoundClient.announcementProblem(
                PLANNED,
                announced(
                    PLANNED.maxSquaredNorm() / 4,
                    PLANNED.varianceNumerator(),
                    PLANNED.noiseShares(),
                    650)))
        .contains("below the " + PLANNED.maxSquaredNorm() + " that rounding an update");
  }

  @Test
  void aPlanWhoseRoundingCannotHold_sendsZeros_whateverTheUpdate() {
    DistributedNoisePlan tight =
        new DistributedNoisePlan(
            PLANNED.bits(),
            PLANNED.dimension(),
            PLANNED.paddedDimension(),
            PLANNED.unitsPerClipNorm(),
            PLANNED.maxSquaredNorm() / 4,
            PLANNED.varianceNumerator(),
            PLANNED.varianceDenominator(),
            PLANNED.noiseShares(),
            PLANNED.maxInputs(),
            PLANNED.noiseMultiplier(),
            PLANNED.wrapProbability());
    double[] large = new double[650];
    java.util.Arrays.fill(large, 1.0);
    dev.privagg.distributed.GridEncoder encoder =
        new dev.privagg.distributed.GridEncoder(tight, "ddg-job", 2);
    long[] words = encoder.encode(large, 1.0, new java.util.SplittableRandom(3));
    // Zero units plus a share: the words' residues are the share alone, of std sigma.
    double squares = 0;
    long half = 1L << (tight.bits() - 1);
    for (long w : words) {
      long r = w >= half ? w - (1L << tight.bits()) : w;
      squares += (double) r * r;
    }
    double sigmaSquared = tight.share().sigmaSquared();
    assertThat(squares / words.length).isBetween(0.8 * sigmaSquared, 1.2 * sigmaSquared);
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

  @Test
  void aSurvivorListOfTooFewHonestInputsGetsNoSignature() {
    dev.privagg.spec.JobSpec spec =
        dev.privagg.spec.JobSpecReader.parse(
            "t",
            """
            jobId: ddg-job
            model:
              tensors:
                - {name: w, shape: [64, 10]}
            rounds:
              timeout: 60s
              expectedClients: 100
              maxClients: 200
              minimumCohort: {count: 95, noiseStd: 10}
            privacy:
              mechanism: distributed-discrete-gaussian
              clipNorm: 0.5
              noiseMultiplier: 1.0
              delta: 1e-5
              budgetEpsilon: 10
            aggregation: {mode: secure}
            """);
    assertThat(spec.distributedNoise().noiseShares()).isEqualTo(23);
    // A lying job's round of three: the shares were sized for 23 honest ones.
    assertThat(SecureRoundClient.tooFewSharesProblem(spec, 3, 3))
        .contains("fewer than the 23 noise shares");
    // A roster of 30 may hold 3 colluders: 25 inputs leave 22 surely honest, 26 leave 23.
    assertThat(SecureRoundClient.tooFewSharesProblem(spec, 30, 25)).contains("at least 22");
    assertThat(SecureRoundClient.tooFewSharesProblem(spec, 30, 26)).isNull();
  }
}
