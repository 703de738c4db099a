package dev.privagg.privacy;

/**
 * The private average of DP-FedAvg (McMahan et al. 2018, Algorithm 1): the sum of clipped updates
 * plus Gaussian noise, divided by the expected cohort size m. A server optimizer then moves the
 * model along it (post-processing).
 *
 * <p>The denominator is the data-independent m from the job spec (design.md invariant 3), never the
 * number of updates received: that count is sensitive, and dividing by it would change the
 * sensitivity analysis. An empty round still yields noise / m.
 */
public final class NoisyAverage {
  private NoisyAverage() {}

  /**
   * Turns {@code sum} into (sum + noise) / m in place and returns it: the pseudo-gradient a server
   * optimizer steps along (Reddi et al., ICLR 2021, Alg. 2: the average client delta).
   *
   * @param noise drawn before the round closed, e.g. by {@link GaussianMechanism#noise}
   */
  public static double[] average(double[] sum, double[] noise, int expectedClients) {
    if (noise.length != sum.length) {
      throw new IllegalArgumentException(
          "sum and noise must have one length, were " + sum.length + " and " + noise.length);
    }
    Checks.atLeastOne("expectedClients", expectedClients);
    for (int i = 0; i < sum.length; i++) {
      sum[i] = (sum[i] + noise[i]) / expectedClients;
    }
    return sum;
  }
}
