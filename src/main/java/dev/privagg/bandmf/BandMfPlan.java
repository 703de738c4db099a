package dev.privagg.bandmf;

import dev.privagg.correlated.BandedOptimizer;
import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.Workload;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.NoisePlanner;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/**
 * The band b and noise multiplier of least error for a target epsilon (jax_privacy {@code
 * toeplitz.optimize_coefs_for_amplifications}): for each candidate b the population splits into b
 * groups of floor(N / b) clients, a round samples its group at q = m / floor(N / b) for an expected
 * cohort of m, z is the least that keeps ceil(n / b) compositions of the sampled Gaussian within
 * the target, and C the optimized b-banded strategy. The error compared is the root of the
 * strategy's loss times z over m: the std of the noise in the average's prefix sums (or in the
 * models of another {@link Workload}, the server's momentum), per unit of clip norm (the mean over
 * rounds or the last round's, as {@code error} says). More bands correlate the noise better; fewer
 * amplify more. One band is DP-FedAvg, so the best is never worse than it.
 */
public final class BandMfPlan {
  private BandMfPlan() {}

  /** One candidate band count and what it costs. */
  public record Candidate(
      int bands,
      double samplingRate,
      long participations,
      double noiseMultiplier,
      BandedToeplitz strategy,
      double averageError) {}

  /**
   * The candidates tried, fewest bands first, with z from {@code screenedBy}; and the best, with z
   * from the accountant asked for.
   */
  public record Result(List<Candidate> candidates, String screenedBy, Candidate best) {}

  /** Candidates the asked accountant calibrates again when it is not the screening one. */
  static final int FINALISTS = 3;

  /**
   * Plans a run of {@code rounds} rounds over {@code population} clients with expected cohort
   * {@code cohort}; {@code bands} null tries band counts from 1 to min(N / m, n, {@link
   * BandedToeplitz#MAX_BANDS}) about a quarter apart, else only the one given.
   *
   * @throws IllegalArgumentException if the cohort exceeds the population, the bands given exceed N
   *     / m (a group would have fewer clients than a cohort) or the rounds, or no noise reaches the
   *     target
   */
  public static Result plan(
      long population,
      int cohort,
      long rounds,
      double targetEpsilon,
      double delta,
      Accountant accountant,
      ErrorKind error,
      Integer bands) {
    return plan(
        population,
        cohort,
        rounds,
        targetEpsilon,
        delta,
        accountant,
        error,
        Workload.PREFIX_SUMS,
        bands,
        BandedToeplitz.MAX_BANDS);
  }

  /**
   * As above, for the models {@code workload} releases (the server optimizer's momentum), with at
   * most {@code bandCap} bands (the buffers' memory, say).
   */
  public static Result plan(
      long population,
      int cohort,
      long rounds,
      double targetEpsilon,
      double delta,
      Accountant accountant,
      ErrorKind error,
      Workload workload,
      Integer bands,
      int bandCap) {
    if (cohort < 1 || population < cohort) {
      throw new IllegalArgumentException(
          "the cohort must be between 1 and the population " + population + ", was " + cohort);
    }
    if (rounds < 1 || rounds > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("rounds must be in [1, 2^31 - 1], was " + rounds);
    }
    int maxBands = Math.min(maxBands(population, cohort, rounds), Math.max(1, bandCap));
    if (bands != null && !(bands >= 1 && bands <= maxBands)) {
      throw new IllegalArgumentException(
          "bands must be in [1, "
              + maxBands
              + "] (at most the rounds, population / cohort = "
              + population / cohort
              + " so that a group holds a cohort, and "
              + bandCap
              + "), was "
              + bands);
    }
    // A PLD calibration takes seconds per band count: RDP (tight enough to rank them) screens, and
    // the asked accountant calibrates the few best again.
    Accountant screen = bands == null ? Accountant.named("rdp") : accountant;
    List<Candidate> candidates = new ArrayList<>();
    for (int b : bands != null ? List.of(bands) : candidateBands(maxBands)) {
      BandedToeplitz strategy = BandedOptimizer.optimize((int) rounds, b, error, workload);
      candidates.add(
          candidate(
              population, cohort, rounds, targetEpsilon, delta, screen, error, workload, strategy));
    }
    Comparator<Candidate> byError = Comparator.comparingDouble(Candidate::averageError);
    List<Candidate> finalists = candidates.stream().sorted(byError).limit(FINALISTS).toList();
    if (!screen.name().equals(accountant.name())) {
      finalists =
          finalists.stream()
              .map(
                  c ->
                      candidate(
                          population,
                          cohort,
                          rounds,
                          targetEpsilon,
                          delta,
                          accountant,
                          error,
                          workload,
                          c.strategy()))
              .toList();
    }
    return new Result(
        List.copyOf(candidates), screen.name(), finalists.stream().min(byError).orElseThrow());
  }

  private static Candidate candidate(
      long population,
      int cohort,
      long rounds,
      double targetEpsilon,
      double delta,
      Accountant accountant,
      ErrorKind error,
      Workload workload,
      BandedToeplitz strategy) {
    int b = strategy.bands();
    double q = samplingRate(population, cohort, b);
    long participations = new AmplifiedBandMf(1, q, rounds, b).participations();
    double z =
        new NoisePlanner(accountant)
            .plan(targetEpsilon, delta, participations, q)
            .noiseMultiplier();
    double averageError = Math.sqrt(strategy.loss((int) rounds, error, workload)) * z / cohort;
    return new Candidate(b, q, participations, z, strategy, averageError);
  }

  /** The sampling rate within a group of b: m / floor(N / b). */
  public static double samplingRate(long population, int cohort, int bands) {
    long group = population / bands;
    if (group < cohort) {
      throw new IllegalArgumentException(
          bands + " groups of " + population + " clients hold fewer than the cohort " + cohort);
    }
    return (double) cohort / group;
  }

  /** The most bands: a group must hold a cohort, the bands fit the rounds and the cap. */
  public static int maxBands(long population, int cohort, long rounds) {
    return (int) Math.min(Math.min(population / cohort, rounds), BandedToeplitz.MAX_BANDS);
  }

  /** 1, 2, 3, ... growing by about a quarter, and the largest. */
  static List<Integer> candidateBands(int maxBands) {
    TreeSet<Integer> out = new TreeSet<>();
    for (int b = 1; b <= maxBands; b = Math.max(b + 1, (int) Math.floor(b * 1.25))) {
      out.add(b);
    }
    out.add(maxBands);
    return List.copyOf(out);
  }
}
