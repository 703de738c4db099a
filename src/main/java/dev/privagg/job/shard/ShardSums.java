package dev.privagg.job.shard;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.ShardCommand;
import dev.privagg.job.ShardRound;
import dev.privagg.job.state.RoundTable;
import dev.privagg.privacy.ClipResult;
import dev.privagg.privacy.ClippedSum;
import dev.privagg.privacy.ClippingPolicy;
import dev.privagg.secagg.MaskedSum;
import dev.privagg.secagg.WordPacking;
import dev.privagg.spec.JobSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard of one job, without Flink: clips and sums the values of the updates the round decider
 * admits, and hands over the round's partial sum once the decider has sealed the round and every
 * admitted update is in it.
 *
 * <p>Values (straight from the decode step) and the decider's commands arrive on two channels, so
 * either may come first: whichever arrives first for an update waits in the store for the other.
 * Each update's clip is the same whatever the order or the shard, and fixed-point sums add exactly,
 * so the partial sums of any shard count add up to the one sum of the round.
 */
public final class ShardSums {
  private static final Logger LOG = LoggerFactory.getLogger(ShardSums.class);

  /** A shard's state: values and commands waiting for each other, and running sums by round. */
  public interface Store {
    /** Removes and returns the values waiting under {@code position}, or null. */
    DecodedUpdate takeValues(String position);

    void holdValues(String position, DecodedUpdate update);

    /** Removes and returns the command waiting under {@code position}, or null. */
    ShardCommand takeCommand(String position);

    void holdCommand(String position, ShardCommand command);

    /** Running sums by round. */
    RoundTable<ShardRound> rounds();
  }

  /** Where a finished partial goes, and what a clip cost. */
  public interface Output {
    void partial(RoundPartial partial);

    void clipped(boolean clipped, long nanos);
  }

  private final JobSpec spec;
  // The spec's policy, then the last round's C: under adaptive clipping every update of a round
  // brings the same C, so the policy is built once a round, not once an update.
  private ClippingPolicy clippingPolicy;
  private final int[] tensorSizes;
  // One update's values, reused: the per-update path allocates no model-sized arrays.
  private final float[][] scratch;

  public ShardSums(JobSpec spec) {
    this.spec = spec;
    this.clippingPolicy = spec.clippingPolicy();
    this.tensorSizes = spec.model().tensorSizes();
    this.scratch = new float[tensorSizes.length][];
    for (int t = 0; t < tensorSizes.length; t++) {
      scratch[t] = new float[tensorSizes[t]];
    }
  }

  /** An update's values, from the decode step. */
  public void values(Store store, DecodedUpdate update, Output out) {
    ShardCommand command = store.takeCommand(update.position());
    if (command == null) {
      store.holdValues(update.position(), update);
      return;
    }
    apply(store, command, update.tensorData, out);
  }

  /** A command from the round decider. */
  public void command(Store store, ShardCommand command, Output out) {
    if (command.kind == ShardCommand.Kind.DISCARD) {
      store.rounds().remove(command.round);
      return;
    }
    if (command.kind == ShardCommand.Kind.SEAL) {
      ShardRound sums = roundOf(store, command.round);
      sums.expected = command.expected;
      finishOrSave(store, command, sums, out);
      return;
    }
    if (command.tensorData != null) {
      apply(store, command, command.tensorData, out);
      return;
    }
    DecodedUpdate update = store.takeValues(command.position());
    if (update == null) {
      store.holdCommand(command.position(), command);
      return;
    }
    apply(store, command, update.tensorData, out);
  }

  private void apply(Store store, ShardCommand command, byte[][] tensorData, Output out) {
    if (command.kind != ShardCommand.Kind.ADMIT) {
      return;
    }
    ShardRound sums = roundOf(store, command.round);
    if (sums.units == null) {
      sums.units = new long[spec.maskedDimension()];
    }
    if (spec.secureAggregation()) {
      // A masked input (docs/secure-aggregation.md): its client clipped and quantized it; the sum
      // wraps modulo 2^64, where the masks cancel once the combiner adds the unmask blocks.
      int bits = spec.maskedWordBits();
      if (sums.units.length != spec.maskedDimension()
          || tensorData[0].length != WordPacking.bytes(spec.maskedDimension(), bits)) {
        // Admitted under a spec that masked other words (a restore across a change of
        // privacy.mechanism or bitsPerCoordinate): the decider ends such a round without a sum.
        LOG.warn(
            "job {}: a masked input of round {} is not in this spec's {}-bit words over {}"
                + " coordinates; left out of the sum",
            spec.jobId(),
            command.round,
            bits,
            spec.maskedDimension());
        finishOrSave(store, command, sums, out);
        return;
      }
      if (bits == 64) {
        MaskedSum.add(sums.units, tensorData[0]);
      } else {
        WordPacking.addTo(sums.units, tensorData[0], spec.maskedWordBits());
      }
      sums.contributions++;
      finishOrSave(store, command, sums, out);
      return;
    }
    // Every update of a round comes with the round's C; the fixed-point units are relative to it.
    // A command without one (from an earlier version) means the spec's C.
    double clipNorm = command.clipNorm > 0 ? command.clipNorm : spec.privacy().clipNorm();
    if (clipNorm != clippingPolicy.clipNorm()) {
      clippingPolicy = spec.clippingPolicy(clipNorm);
    }
    ClippedSum sum = ClippedSum.wrap(clippingPolicy, tensorSizes, sums.units, sums.contributions);
    long started = System.nanoTime();
    DecodedUpdate.readValues(tensorData, scratch);
    ClipResult clip = sum.add(scratch);
    out.clipped(clip.clipped(), System.nanoTime() - started);
    sums.contributions = sum.contributions();
    sums.clipped += clip.clipped() ? 1 : 0;
    finishOrSave(store, command, sums, out);
  }

  private static ShardRound roundOf(Store store, long round) {
    ShardRound sums = store.rounds().get(round);
    return sums != null ? sums : new ShardRound();
  }

  private static void finishOrSave(Store store, ShardCommand command, ShardRound sums, Output out) {
    if (sums.complete()) {
      store.rounds().remove(command.round);
      out.partial(new RoundPartial(command.jobId, command.shardKey, command.round, sums));
    } else {
      store.rounds().put(command.round, sums);
    }
  }
}
