package dev.privagg.job.decide;

import dev.privagg.job.combine.CombinedRounds;
import dev.privagg.job.combine.NoiseBlocks;
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
   * Correlated noise (BLT, banded): sigma (C^-1 Z)_t, where x = C^-1 Z solves the lower-triangular
   * Toeplitz system C x = Z by forward substitution, {@code x_t = (Z_t - sum_(s < t) c_(t - s) x_s)
   * / c_0} with C's coefficients {@code c} (a banded C's zero past its bands), and Z_s round s's
   * unit normals: block by block, each block's coordinates from its own stream for (job, round,
   * block) ({@link NoiseStreams#correlatedBlock}), the blocks cut as {@link NoiseBlocks} cuts them.
   * Computed from the coefficients, not with the buffers' recursion the noise blocks run, so the
   * two check each other; every round from 1 counts, released or not, as the blocks' buffers pass
   * every Z.
   */
  private static double[] correlatedSumNoise(JobSpec spec, NoiseSource source, long round) {
    int d = spec.model().dimension();
    int t = Math.toIntExact(round);
    JobSpec.Correlated correlated = spec.privacy().correlated();
    double[] c =
        correlated.banded()
            ? java.util.Arrays.copyOf(correlated.bandedStrategy().coefficients(), t)
            : correlated.strategy().toeplitzCoefficients(t);
    double[][] x = new double[t][d];
    int blocks = NoiseBlocks.blocks(spec);
    for (int r = 0; r < t; r++) {
      for (int b = 0; b < blocks; b++) {
        int from = (int) ((long) b * d / blocks);
        int to = (int) ((long) (b + 1) * d / blocks);
        double[] z = new double[to - from];
        source.forRound(NoiseStreams.correlatedBlock(spec, b, blocks), r + 1).addGaussian(z, 1.0);
        System.arraycopy(z, 0, x[r], from, z.length);
      }
      for (int s = 0; s < r; s++) {
        for (int i = 0; i < d; i++) {
          x[r][i] -= c[r - s] * x[s][i];
        }
      }
      for (int i = 0; i < d; i++) {
        x[r][i] /= c[0]; // a BLT's c_0 is 1; a banded C's is its first unit-norm coefficient
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
