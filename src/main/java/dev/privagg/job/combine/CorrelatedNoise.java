package dev.privagg.job.combine;

import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import java.util.Arrays;

/** What a job's correlated-noise buffers were built for, and the refusal when that changes. */
public final class CorrelatedNoise {
  private CorrelatedNoise() {}

  /**
   * Everything a correlated run's released noise and charges depend on: the BLT (or the bands, the
   * sampling rate within a group and a keyed fingerprint of the groups, which another key,
   * deployment, models topic or job id would change), the schema, n, z, C, the block count and the
   * noise source. Any change mid-run would make the released noise something other than sigma C^-1
   * Z of one Z, or the charges other than its increments, which the accounting does not cover; the
   * decider and the noise blocks both compare it with what their state was built under.
   */
  public static String describe(JobSpec spec, NoiseSource noise) {
    JobSpec.Correlated c = spec.privacy().correlated();
    String strategy =
        c.banded()
            ? "bandmf(coefficients="
                + Arrays.toString(c.bandCoefficients())
                + ", samplingRate="
                + spec.privacy().sampling().rate()
                + ", groups="
                + Long.toHexString(
                    noise.forRound(NoiseStreams.groupFingerprint(spec), 0).bits().nextLong())
            : "blt(theta=" + Arrays.toString(c.theta()) + ", omega=" + Arrays.toString(c.omega());
    return strategy
        + ", rounds="
        + spec.privacy().plannedRounds()
        + ", minSeparation="
        + c.minSeparation()
        + ", maxParticipations="
        + c.maxParticipations()
        + ", noiseMultiplier="
        + spec.privacy().noiseMultiplier()
        + ", clipNorm="
        + spec.privacy().clipNorm()
        + ", noiseBlocks="
        + NoiseBlocks.blocks(spec)
        + ", noise="
        + noise.kind()
        + ")";
  }

  /** The buffers in state cannot produce this spec's noise: the job must not continue. */
  static final class MismatchException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    MismatchException(String message) {
      super(message);
    }
  }
}
