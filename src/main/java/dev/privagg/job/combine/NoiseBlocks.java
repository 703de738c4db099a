package dev.privagg.job.combine;

import dev.privagg.correlated.BufferedToeplitz;
import dev.privagg.job.NoiseBuffers;
import dev.privagg.job.RoundPartial;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.spec.JobSpec;

/**
 * Correlated noise of one job, generated block by block without Flink: the model's coordinates are
 * cut into {@link #blocks()} contiguous blocks, each keyed on its own so the BLT's m buffers (m
 * model-sized arrays in all) spread over the cluster. Block b's noise for round t is sigma (C^-1
 * Z)_t on its coordinates, with Z drawn from the block's own stream for (job, round, block): a
 * replayed round draws the same Z and, from the same checkpointed buffers, gives the same noise.
 *
 * <p>A block's buffers pass every round's Z, released or not: a request for round t first passes
 * the rounds between the buffers' round and t (withheld, or taken over from an earlier run),
 * drawing their Z again from the same reproducible streams.
 */
public final class NoiseBlocks {
  private final JobSpec spec;
  private final NoiseSource noiseSource;
  private final BufferedToeplitz strategy;
  private final String mechanism;
  private final int blocks;

  public NoiseBlocks(JobSpec spec, NoiseSource noiseSource) {
    if (!spec.correlated()) {
      throw new IllegalArgumentException("job " + spec.jobId() + " does not use correlated noise");
    }
    this.spec = spec;
    this.noiseSource = noiseSource;
    this.strategy = spec.privacy().correlated().strategy();
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

  /** Block {@code block}'s noise for round {@code round}, and its buffers after it. */
  public record Generated(NoiseBuffers buffers, RoundPartial partial) {}

  /**
   * Generates block {@code block}'s share of round {@code round} from its buffers {@code state}
   * (null before its first round), or refuses buffers built for another mechanism or already past
   * the round.
   */
  public Generated generate(NoiseBuffers state, int block, long round) {
    int size = offset(block + 1) - offset(block);
    if (state == null && round > 1) {
      // Every round seals in turn and asks every block, so a block without buffers past round 1
      // belongs to another block count, or lost its state: its rebuilt noise would not be the one
      // the released rounds' Z call for.
      throw new CorrelatedNoise.MismatchException(
          "job "
              + spec.jobId()
              + ": noise block "
              + block
              + " of "
              + blocks
              + " has no buffers for round "
              + round
              + ": privacy.blt.noiseBlocks or the state changed since round 1; restore with the"
              + " spec it started with");
    }
    if (state == null) {
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
      BufferedToeplitz.correlate(strategy, state.buffers, values);
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
