package dev.privagg.job.decide;

import dev.privagg.job.combine.CombinedRounds;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.combine.NoiseStreams;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.spec.JobSpec;

/**
 * What a job draws from its noise source in one deployment, computed as the job computes it: for
 * tests that check releases of keyed jobs whose deployment nonce they read from the ledger.
 */
public final class DeploymentNoise {
  private DeploymentNoise() {}

  /**
   * Round {@code round}'s sum noise in deployment {@code deployment}, as {@link CombinedRounds}
   * draws it at the spec's C.
   */
  public static double[] sumNoise(JobSpec spec, String deployment, long round) {
    NoiseStream stream =
        NoiseSources.forSpec(spec, deployment).forRound(NoiseStreams.sum(spec), round);
    return spec.mechanism(spec.privacy().clipNorm()).noise(spec.model().dimension(), stream);
  }

  /**
   * Whether server-side Poisson sampling takes the client's update of a round, as {@link
   * RoundLifecycle} draws it.
   */
  public static boolean sampled(JobSpec spec, String deployment, String clientId, long round) {
    if (!spec.privacy().sampling().mode().equals("server-poisson")) {
      return true;
    }
    return NoiseSources.forSpec(spec, deployment)
            .forRound(NoiseStreams.sampling(spec, clientId), round)
            .nextUniform()
        < spec.privacy().sampling().rate();
  }
}
