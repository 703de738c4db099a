package dev.privagg.sim;

import dev.privagg.privacy.Checks;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * Client-side Poisson sampling, as cross-device deployments do it: in every round each client
 * decides on its own, with probability {@code samplingRate} = expected cohort / population, whether
 * it trains and sends. The job does not sample; its spec declares the rate ({@code
 * declared-client-poisson}) and the accountant charges each round at it (Poisson subsampled
 * Gaussian, Mironov, Talwar and Zhang 2019), which holds only if clients really draw this way.
 *
 * <p>Each draw is a pure function of (seed, client, round), so a simulation is reproducible and the
 * draws of different clients and rounds are independent: the three are combined into one 64-bit key
 * with odd multipliers, and the first output of a {@link SplittableRandom} seeded with it passes
 * the key through a 64-bit finalizer (Stafford's Mix13), so neighbouring keys give unrelated draws.
 */
public record ClientSampling(double samplingRate, long seed) {
  public ClientSampling {
    Checks.samplingRate("samplingRate", samplingRate);
  }

  /** Whether {@code client} takes part in {@code round}: Bernoulli(samplingRate). */
  public boolean participates(long client, long round) {
    long key =
        seed * 0x9E3779B97F4A7C15L + client * 0xC2B2AE3D27D4EB4FL + round * 0x165667B19E3779F9L;
    return new SplittableRandom(key).nextDouble() < samplingRate;
  }

  /** The clients 0..clients-1 that take part in {@code round}, ascending. */
  public int[] cohort(int clients, long round) {
    return IntStream.range(0, clients).filter(c -> participates(c, round)).toArray();
  }
}
