package dev.privagg.job;

import dev.privagg.privacy.NoiseStream;
import dev.privagg.spec.JobSpec;

/**
 * What a job draws from its noise source in one deployment, computed as the job computes it: for
 * tests that check releases of keyed jobs whose deployment nonce they read from the ledger.
 */
final class DeploymentNoise {
  private DeploymentNoise() {}

  /**
   * Round {@code round}'s sum noise in deployment {@code deployment}, as {@link CombinedRounds}
   * draws it at the spec's C. Only for specs whose decider draws nothing from the round's stream
   * first (no minimum cohort, no adaptive clipping).
   */
  static double[] sumNoise(JobSpec spec, String deployment, long round) {
    if (spec.rounds().minimumCohort() > 0 || spec.adaptiveClipping()) {
      throw new IllegalArgumentException(
          "job " + spec.jobId() + ": its decider draws counts from the round's stream first");
    }
    NoiseStream stream =
        NoiseSources.forSpec(spec, deployment).forRound(CombinedRounds.noiseStream(spec), round);
    return spec.mechanism(spec.privacy().clipNorm()).noise(spec.model().dimension(), stream);
  }

  /**
   * Whether server-side Poisson sampling takes the client's update of a round, as {@link
   * RoundLifecycle} draws it.
   */
  static boolean sampled(JobSpec spec, String deployment, String clientId, long round) {
    if (!spec.privacy().sampling().mode().equals("server-poisson")) {
      return true;
    }
    return NoiseSources.forSpec(spec, deployment)
            .forRound(spec.jobId() + "/sampling/" + clientId, round)
            .nextUniform()
        < spec.privacy().sampling().rate();
  }
}
