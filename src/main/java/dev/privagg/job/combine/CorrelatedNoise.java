package dev.privagg.job.combine;

import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import java.util.Arrays;

/** What a job's correlated-noise buffers were built for, and the refusal when that changes. */
final class CorrelatedNoise {
  private CorrelatedNoise() {}

  /**
   * The mechanism a spec's buffers follow: the BLT, the noise std per unit of C^-1 Z and the noise
   * source. Any change mid-run would make the released noise something other than sigma C^-1 Z,
   * which the accounting does not cover.
   */
  static String describe(JobSpec spec, NoiseSource noise) {
    JobSpec.Correlated c = spec.privacy().correlated();
    return "blt(theta="
        + Arrays.toString(c.theta())
        + ", omega="
        + Arrays.toString(c.omega())
        + ", rounds="
        + spec.privacy().plannedRounds()
        + ", sigma="
        + spec.mechanism(spec.privacy().clipNorm()).sigma()
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
