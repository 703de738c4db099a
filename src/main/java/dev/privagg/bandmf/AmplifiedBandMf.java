package dev.privagg.bandmf;

import dev.privagg.privacy.PrivacyEvent;

/**
 * The privacy of amplified banded matrix factorization (Choquette-Choo, Ganesh, McKenna, McMahan,
 * Rush, Thakurta, Xu, NeurIPS 2023, arXiv:2306.08153, Thm 4 with Alg. 2, cyclic Poisson sampling):
 * clients split into b fixed groups, round t takes only group (t - 1) mod b and samples each of its
 * clients with probability q, and the noise is sigma C^-1 Z for a b-banded C of unit column norm
 * with sigma = z C_clip. A client's participations are then b rounds apart and touch disjoint rows
 * of C, and the run is ceil(n / b) compositions of the Poisson-subsampled Gaussian at z:
 * jax_privacy {@code accounting.amplified_bandmf_event}. One band is DP-SGD / DP-FedAvg.
 *
 * @param noiseMultiplier z, the noise's std over the clip norm
 * @param samplingRate q, the probability a client of the round's group is sampled
 * @param rounds n, the planned rounds (none runs past them)
 * @param bands b, the strategy's bands and the number of groups
 */
public record AmplifiedBandMf(double noiseMultiplier, double samplingRate, long rounds, int bands) {
  public AmplifiedBandMf {
    if (!(noiseMultiplier >= 0 && Double.isFinite(noiseMultiplier))) {
      throw new IllegalArgumentException(
          "noiseMultiplier must be >= 0 and finite, was " + noiseMultiplier);
    }
    if (!(samplingRate > 0 && samplingRate <= 1)) {
      throw new IllegalArgumentException("samplingRate must be in (0, 1], was " + samplingRate);
    }
    if (rounds < 1) {
      throw new IllegalArgumentException("rounds must be >= 1, was " + rounds);
    }
    if (bands < 1) {
      throw new IllegalArgumentException("bands must be >= 1, was " + bands);
    }
  }

  /** The most rounds one client takes part in over the first {@code round} rounds. */
  public long participationsThrough(long round) {
    long through = Math.max(0, Math.min(round, rounds));
    return (through + bands - 1) / bands;
  }

  /** The most rounds one client takes part in over the run, ceil(n / b). */
  public long participations() {
    return participationsThrough(rounds);
  }

  /** The whole run's event: ceil(n / b) Poisson-subsampled Gaussians at z and q. */
  public PrivacyEvent event() {
    return PrivacyEvent.sampledGaussian(noiseMultiplier, samplingRate, participations());
  }

  /**
   * Whether round {@code round} adds a participation: the first round of each cycle of b (group 0's
   * rounds), where the most participations of any client over the rounds so far grows by one. The
   * other rounds of a cycle belong to groups that have had no more rounds than group 0.
   */
  public boolean charges(long round) {
    return round >= 1 && round <= rounds && (round - 1) % bands == 0;
  }

  /** The event a charging round adds: one Poisson-subsampled Gaussian at z and q. */
  public PrivacyEvent roundEvent() {
    return PrivacyEvent.sampledGaussian(noiseMultiplier, samplingRate, 1);
  }

  /** The group whose clients round {@code round} admits: (round - 1) mod b. */
  public int groupOf(long round) {
    return (int) Math.floorMod(round - 1, (long) bands);
  }
}
