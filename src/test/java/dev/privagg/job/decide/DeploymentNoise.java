package dev.privagg.job.decide;

import dev.privagg.job.combine.CombinedRounds;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.combine.NoiseStreams;
import dev.privagg.privacy.NoiseSource;
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
   * draws it at the spec's C; with correlated noise, {@link #correlatedSumNoise}.
   */
  public static double[] sumNoise(JobSpec spec, String deployment, long round) {
    NoiseSource source = NoiseSources.forSpec(spec, deployment);
    if (spec.correlated()) {
      return correlatedSumNoise(spec, source, round);
    }
    NoiseStream stream = source.forRound(NoiseStreams.sum(spec), round);
    return spec.mechanism(spec.privacy().clipNorm()).noise(spec.model().dimension(), stream);
  }

  /**
   * Correlated noise (BLT): sigma (C^-1 Z)_t, where x = C^-1 Z solves the lower-triangular Toeplitz
   * system C x = Z by forward substitution, {@code x_t = Z_t - sum_(s < t) c_(t - s) x_s} with C's
   * coefficients {@code c} ({@code c_0 = 1}), and Z_s the unit normals of round s's sum stream.
   * Computed from the coefficients, not with the buffers' recursion the combiner runs, so the two
   * check each other; every round from 1 counts, released or not, as the combiner's buffers pass
   * every Z.
   */
  private static double[] correlatedSumNoise(JobSpec spec, NoiseSource source, long round) {
    int d = spec.model().dimension();
    int t = Math.toIntExact(round);
    double[] c = spec.privacy().correlated().strategy().toeplitzCoefficients(t);
    double[][] x = new double[t][d];
    for (int r = 0; r < t; r++) {
      source.forRound(NoiseStreams.sum(spec), r + 1).addGaussian(x[r], 1.0);
      for (int s = 0; s < r; s++) {
        for (int i = 0; i < d; i++) {
          x[r][i] -= c[r - s] * x[s][i];
        }
      }
    }
    double[] out = x[t - 1];
    double sigma = spec.mechanism(spec.privacy().clipNorm()).sigma();
    for (int i = 0; i < d; i++) {
      out[i] *= sigma;
    }
    return out;
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
