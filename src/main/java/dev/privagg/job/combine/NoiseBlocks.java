package dev.privagg.job.combine;

import dev.privagg.correlated.NoiseCorrelation;
import dev.privagg.job.NoiseBuffers;
import dev.privagg.job.NoiseRequest;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.RoundSignal;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * Correlated noise of one job, generated block by block without Flink: the model's coordinates are
 * cut into {@link #blocks()} contiguous blocks, each keyed on its own so the strategy's buffers (a
 * BLT's m, a b-banded C's b - 1, model-sized arrays in all) spread over the cluster. Block b's
 * noise for round t is sigma (C^-1 Z)_t on its coordinates, with Z drawn from the block's own
 * stream for (job, round, block): a replayed round draws the same Z and, from the same checkpointed
 * buffers, gives the same noise.
 *
 * <p>A block's buffers pass every round's Z, released or not: a request for round t first passes
 * the rounds between the buffers' round and t (withheld, or skipped: announced by an earlier run
 * and charged without a seal), drawing their Z again from the same reproducible streams. A block
 * without buffers starts from round 0 the same way, as long as no round before t was released.
 */
public final class NoiseBlocks {
  private final JobSpec spec;
  private final NoiseSource noiseSource;
  private final NoiseCorrelation strategy;
  private final String mechanism;
  private final int blocks;

  public NoiseBlocks(JobSpec spec, NoiseSource noiseSource) {
    if (!spec.correlated()) {
      throw new IllegalArgumentException("job " + spec.jobId() + " does not use correlated noise");
    }
    this.spec = spec;
    this.noiseSource = noiseSource;
    this.strategy = spec.privacy().correlated().noiseCorrelation();
    this.mechanism = CorrelatedNoise.describe(spec, noiseSource);
    this.blocks = blocks(spec);
  }

  /** The job's block count: the spec's, at most one block per coordinate. */
  public static int blocks(JobSpec spec) {
    return Math.min(spec.privacy().correlated().noiseBlocks(), spec.model().dimension());
  }

  public int blocks() {
    return blocks;
  }

  /** The routing key of block {@code block}. */
  public static String key(JobSpec spec, int block) {
    return spec.jobId() + "#noise-" + block + "-of-" + blocks(spec);
  }

  /** The first coordinate of block {@code block}; {@code offset(blocks())} is the dimension. */
  int offset(int block) {
    return (int) ((long) block * spec.model().dimension() / blocks);
  }

  /**
   * What the sealed round {@code sealed} asks of each block of {@code spec}. Nothing was released
   * before it when it trains on round 0's model (a withheld round's signal names no model, -1, and
   * asks as if something was; blt refuses the minimum cohort, so its rounds are all released).
   */
  public static List<NoiseRequest> requests(JobSpec spec, RoundSignal sealed) {
    List<NoiseRequest> requests = new ArrayList<>();
    for (int b = 0; b < blocks(spec); b++) {
      requests.add(
          new NoiseRequest(
              sealed.jobId, sealed.round, b, key(spec, b), sealed.baseModelRound == 0));
    }
    return requests;
  }

  /** Block {@code block}'s noise for round {@code round}, and its buffers after it. */
  public record Generated(NoiseBuffers buffers, RoundPartial partial) {}

  /**
   * Generates the requested block's share of the requested round from its buffers {@code state}
   * (null before its first round), or refuses buffers built for another mechanism or already past
   * the round, and missing buffers once a round before was released.
   */
  public Generated generate(NoiseBuffers state, NoiseRequest request) {
    int block = request.block;
    long round = request.round;
    int size = offset(block + 1) - offset(block);
    if (state == null && round > 1 && !request.nothingReleasedBefore) {
      // Every sealed round asks every block, so a block without buffers past round 1 missed the
      // rounds before: skipped ones while nothing was released (their Z is passed below), else it
      // belongs to another block count or lost its state, and its rebuilt noise would not be the
      // one the released rounds' Z call for.
      throw new CorrelatedNoise.MismatchException(
          "job "
              + spec.jobId()
              + ": noise block "
              + block
              + " of "
              + blocks
              + " has no buffers for round "
              + round
              + ", and a round before it may have been released: privacy.blt.noiseBlocks or the"
              + " state changed since; restore with the spec it started with");
    }
    if (state == null) {
      // Round 0: the loop below passes the Z of every round before this one (skipped) too.
      state = new NoiseBuffers(0, mechanism, new double[strategy.buffers()][size]);
    } else if (!mechanism.equals(state.mechanism)) {
      throw new CorrelatedNoise.MismatchException(
          "job "
              + spec.jobId()
              + ": the noise buffers in state were built for "
              + state.mechanism
              + ", but this spec asks for "
              + mechanism
              + "; a BLT run keeps its mechanism to the end: restore with the spec it started with");
    } else if (state.round >= round) {
      throw new CorrelatedNoise.MismatchException(
          "job "
              + spec.jobId()
              + ": noise block "
              + block
              + " is at round "
              + state.round
              + ", at or past round "
              + round
              + " asked of it; restore the checkpoint or savepoint these rounds came from");
    }
    double[] values = new double[size];
    for (long r = state.round + 1; r <= round; r++) {
      java.util.Arrays.fill(values, 0);
      noiseSource
          .forRound(NoiseStreams.correlatedBlock(spec, block, blocks), r)
          .addGaussian(values, 1.0);
      strategy.correlate(state.buffers, values);
    }
    double sigma = spec.mechanism(spec.privacy().clipNorm()).sigma();
    for (int i = 0; i < size; i++) {
      values[i] *= sigma;
    }
    state.round = round;
    return new Generated(
        state,
        RoundPartial.noiseBlock(spec.jobId(), key(spec, block), round, offset(block), values));
  }
}
