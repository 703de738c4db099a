package dev.privagg.spec;

import dev.privagg.bandmf.AmplifiedBandMf;
import dev.privagg.bandmf.BandMfPlan;
import dev.privagg.correlated.BandedOptimizer;
import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.Workload;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.AdaptiveClipping;
import dev.privagg.privacy.NoisePlanner;
import java.util.List;

/**
 * {@code privacy.mechanism: bandmf}: amplified banded matrix factorization (see {@link
 * AmplifiedBandMf}). The job puts each client in one of b groups by a keyed draw, admits a group
 * only to its rounds and samples its clients at q = m / floor(N / b), so the spec names the
 * population N instead of a sampling rate; b and z come from the spec or from a plan for the target
 * epsilon ({@link BandMfPlan}).
 */
final class BandMfSection {
  /**
   * Most buffered noise values over all blocks, (b - 1) d: 2^28 doubles, 2 GiB of state (a BLT
   * keeps at most 8 d).
   */
  static final long MAX_BUFFERED_VALUES = 1L << 28;

  /**
   * Most buffered values of one noise block, (b - 1) ceil(d / noiseBlocks): 2^27 doubles, 1 GiB, as
   * one block's buffers are one state value, which a Java array must hold.
   */
  static final long MAX_BLOCK_BUFFERED_VALUES = 1L << 27;

  private BandMfSection() {}

  static JobSpec.Privacy read(
      YamlSection s,
      YamlSection b,
      JobSpec.Rounds rounds,
      double clipNorm,
      String clipping,
      String split,
      double delta,
      double budget,
      String accountant,
      JobSpec.Sampling sampling,
      AdaptiveClipping adaptive,
      JobSpec.Noise noise,
      int dimension,
      Workload workload) {
    if (b == null) {
      throw s.fail(
          "bandmf", "is needed with mechanism bandmf: population (and bands, or targetEpsilon)");
    }
    if (!sampling.mode().equals("none")) {
      throw s.fail(
          "sampling",
          "must be absent with mechanism bandmf (was "
              + sampling.mode()
              + "): the job samples each round's group itself at rounds.expectedClients /"
              + " (privacy.bandmf.population / bands)");
    }
    long n = JobSpecReader.matrixMechanismRounds(s, "bandmf", rounds, adaptive, noise, accountant);
    int m = rounds.expectedClients();
    long population =
        b.integer("population", "N, the clients that may take part; at least the cohort");
    if (population < m) {
      throw b.fail(
          "population", "must be at least rounds.expectedClients (" + m + "), was " + population);
    }
    int d = dimension;
    int noiseBlocks =
        (int)
            b.integerIn(
                "noiseBlocks",
                JobSpecReader.DEFAULT_NOISE_BLOCKS,
                1,
                JobSpecReader.MAX_NOISE_BLOCKS,
                "coordinate blocks that generate the noise in parallel; fixed for the run");
    long largestBlock = (d + noiseBlocks - 1) / noiseBlocks;
    int memoryBands =
        (int)
            Math.min(
                BandedToeplitz.MAX_BANDS,
                Math.min(
                    1 + MAX_BUFFERED_VALUES / d, 1 + MAX_BLOCK_BUFFERED_VALUES / largestBlock));
    int maxBands = Math.min(BandMfPlan.maxBands(population, m, n), memoryBands);
    String error = b.choice("error", "mean", List.of("max", "mean"));
    ErrorKind kind = error.equals("max") ? ErrorKind.MAX : ErrorKind.MEAN;
    double[] coefficients =
        b.has("coefficients")
            ? b.numberList("coefficients", "the banded strategy's first column, c_0 != 0")
            : null;
    Integer bands = null;
    if (b.has("bands")) {
      bands =
          (int)
              b.integerIn(
                  "bands",
                  1,
                  1,
                  maxBands,
                  "b, the groups and bands; at most plannedRounds, population /"
                      + " rounds.expectedClients so that a group holds a cohort, 1 + 2^28 /"
                      + " the model's parameters, so that the b - 1 noise buffers fit 2 GiB, and"
                      + " 1 + 2^27 / the parameters per noise block, so that one block's fit 1"
                      + " GiB (raise noiseBlocks for more)");
    } else if (coefficients != null) {
      bands = coefficients.length;
    }
    if (coefficients != null && bands != coefficients.length) {
      throw b.fail(
          "bands", "must match coefficients' length " + coefficients.length + ", was " + bands);
    }
    if (coefficients != null && coefficients.length > maxBands) {
      throw b.fail(
          "coefficients",
          "holds "
              + coefficients.length
              + " bands, more than the "
              + maxBands
              + " that plannedRounds, population / rounds.expectedClients and the noise buffers'"
              + " memory allow");
    }
    b.finish();
    if (s.has("noiseMultiplier") == s.has("targetEpsilon")) {
      throw s.fail(
          "noiseMultiplier",
          "or privacy.targetEpsilon: set exactly one of them (bandmf plans z, and the bands if"
              + " not given, for the whole run of plannedRounds)");
    }
    double z;
    double targetEpsilon = Double.NaN;
    BandedToeplitz strategy = null;
    if (s.has("noiseMultiplier")) {
      z = s.number("noiseMultiplier", "noise std / clipNorm, e.g. 1.0");
      if (!(z > 0 && Double.isFinite(z))) {
        throw s.fail("noiseMultiplier", "must be > 0 and finite with mechanism bandmf, was " + z);
      }
      if (bands == null) {
        throw b.fail("bands", "is required with privacy.noiseMultiplier (or plan with a target)");
      }
    } else {
      targetEpsilon = s.number("targetEpsilon", "epsilon the planned rounds may spend");
      if (!(targetEpsilon > 0 && Double.isFinite(targetEpsilon))) {
        throw s.fail("targetEpsilon", "must be > 0 and finite, was " + targetEpsilon);
      }
      try {
        if (bands == null) {
          BandMfPlan.Candidate best =
              BandMfPlan.plan(
                      population,
                      m,
                      n,
                      targetEpsilon,
                      delta,
                      Accountant.named(accountant),
                      kind,
                      workload,
                      null,
                      memoryBands)
                  .best();
          bands = best.bands();
          strategy = best.strategy();
          z = best.noiseMultiplier();
        } else {
          double q = BandMfPlan.samplingRate(population, m, bands);
          long k = new AmplifiedBandMf(1, q, n, bands).participations();
          z =
              new NoisePlanner(Accountant.named(accountant))
                  .plan(targetEpsilon, delta, k, q)
                  .noiseMultiplier();
        }
      } catch (IllegalArgumentException e) {
        throw s.fail("targetEpsilon", "cannot be reached: " + e.getMessage());
      }
    }
    if (strategy == null) {
      try {
        strategy =
            coefficients != null
                ? BandedToeplitz.of(coefficients)
                : BandedOptimizer.optimize((int) n, bands, kind, workload);
      } catch (IllegalArgumentException e) {
        throw b.fail("coefficients", "do not give a usable strategy: " + e.getMessage());
      }
    }
    double loss = strategy.loss((int) n, kind, workload);
    double independent = BandedToeplitz.identity().loss((int) n, kind, workload);
    if (!(loss <= independent)) {
      // An inverse that grows (a root of c(x) inside the unit disk) makes the noise explode over
      // the rounds; any C worse than independent noise is a mistake, never a trade-off.
      throw b.fail(
          "coefficients",
          "give a strategy with "
              + error
              + " error "
              + loss
              + " over plannedRounds, above independent noise's "
              + independent
              + " (its inverse grows: the noise would swamp the model); use coefficients that"
              + " decay, or omit them to optimize");
    }
    JobSpecReader.requireFiniteNoise(s, z, clipNorm, 1.0);
    s.finish();
    double q = BandMfPlan.samplingRate(population, m, bands);
    if (bands > 1) {
      // The keyed groups are about N / b each, binomially: a cap a group can reach would cut a
      // round to its first arrivals, a selection that is neither Poisson nor charged.
      double groupMean = (double) population / bands;
      long room = (long) Math.ceil(groupMean + 6 * Math.sqrt(groupMean));
      if (rounds.maxClients() < room) {
        throw s.failAt(
            "rounds.maxClients",
            "must be at least "
                + room
                + " with mechanism bandmf (a group of population / bands = "
                + groupMean
                + " clients plus 6 standard deviations: a keyed group that large comes once in"
                + " 1e9), was "
                + rounds.maxClients());
      }
    }
    // One band is C = I and one group: DP-FedAvg with the server's Poisson sampling, run as
    // exactly that (the same noise stream, charges and state), so the two cannot drift apart.
    JobSpec.Correlated correlated =
        bands == 1 ? null : JobSpec.Correlated.banded(strategy, n, error, noiseBlocks);
    return new JobSpec.Privacy(
        clipNorm,
        clipping,
        split,
        z,
        targetEpsilon,
        n,
        delta,
        budget,
        accountant,
        new JobSpec.Sampling("server-poisson", q, 0, 0),
        noise,
        null,
        correlated,
        false);
  }
}
