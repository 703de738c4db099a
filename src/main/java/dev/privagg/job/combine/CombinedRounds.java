package dev.privagg.job.combine;

import dev.privagg.distributed.GridEncoder;
import dev.privagg.job.CombinedRound;
import dev.privagg.job.ModelState;
import dev.privagg.job.RoundNoise;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.RoundSignal;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.state.RoundTable;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.ClippedSum;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.privacy.NoisyAverage;
import dev.privagg.privacy.SumBound;
import dev.privagg.spec.JobSpec;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release step of one job, without Flink: adds up a sealed round's partial sums, adds the
 * round's noise and moves the model (DP-FedAvg's server step).
 *
 * <p>The noise does not depend on the data: it is drawn when the round opens, from the job's noise
 * source for (models topic, job id, round), at the round's C, so closing a round costs a sum, an
 * add and an encode. Drawn noise is kept in memory only; after a restore it is drawn again at the
 * close (with a keyed source, the same values). The stream's first values are the counts' (the
 * minimum-cohort rule's, then adaptive clipping's), which the decider draws.
 *
 * <p>The server step is the spec's {@link ServerOptimizer} on the noisy average (post-processing):
 * its moments are kept with the released model in state and published nowhere. A base model that
 * did not come from this state (the models topic after a fresh start, an earlier version's state)
 * starts them again from zero.
 *
 * <p>Partials and seals come on separate channels, so a later round may be complete before an
 * earlier one: a round is released only once the model it trains on is there, and each release
 * looks for rounds that were waiting on it.
 */
public final class CombinedRounds {
  private static final Logger LOG = LoggerFactory.getLogger(CombinedRounds.class);

  /** The combiner's state. */
  public interface Store {
    /** Rounds with partials or a seal in, not yet released. */
    RoundTable<CombinedRound> rounds();

    ModelState model();

    void saveModel(ModelState model);

    /** Correlated noise: each round's noise as its blocks come in. */
    RoundTable<RoundNoise> noise();
  }

  /** What a finished round turns into. */
  public interface Output {
    /** {@code model}: the new model, to read during the call only. */
    void release(RoundSignal sealed, CombinedRound sums, float[] model, long noiseNanos);

    void withhold(RoundSignal sealed, CombinedRound sums);
  }

  private final JobSpec spec;
  private final NoiseSource noiseSource;
  private final LedgerFloor floor;
  private final Map<Long, Drawn> drawn = new HashMap<>();

  /** A round's sum noise and the C it was drawn for. */
  private record Drawn(double clipNorm, double[] noise) {}

  public CombinedRounds(JobSpec spec, NoiseSource noiseSource, LedgerFloor floor) {
    this.spec = spec;
    this.noiseSource = noiseSource;
    this.floor = floor;
  }

  /**
   * Round {@code round} opened with C {@code clipNorm}: draw its noise now, off the close's path.
   */
  public void opened(long round, double clipNorm) {
    if (spec.correlated()) {
      return; // its noise comes from the noise blocks
    }
    drawn.keySet().removeIf(r -> r < round - 1);
    double c = clipNormOf(clipNorm);
    drawn.computeIfAbsent(round, r -> new Drawn(c, draw(r, c)));
  }

  /** A signal's C, or the spec's for signals of versions that did not carry one. */
  private double clipNormOf(double signalled) {
    return signalled > 0 ? signalled : spec.privacy().clipNorm();
  }

  public void partial(Store store, RoundPartial partial, Output out) {
    if (partial.noise != null) {
      noiseBlock(store, partial);
      CombinedRound combined = store.rounds().get(partial.round);
      if (combined != null) {
        finishOrSave(store, partial.round, combined, out);
      }
      return;
    }
    CombinedRound combined = roundOf(store, partial.round);
    if (partial.units != null) {
      // Shards send every coordinate; a secure job's unmask blocks send their range. Additions
      // wrap modulo 2^64, where masks cancel.
      if (combined.units == null
          && partial.unitsOffset == 0
          && partial.units.length == spec.maskedDimension()) {
        combined.units = partial.units;
      } else {
        if (combined.units == null) {
          combined.units = new long[spec.maskedDimension()];
        }
        long[] units = combined.units;
        int offset = partial.unitsOffset;
        if (offset < 0 || (long) offset + partial.units.length > units.length) {
          // Summed under a spec of other masked words (a restore across a change of the
          // mechanism); the decider ends such a round without a sum.
          LOG.warn(
              "job {}: round {}'s partial of {} values at {} does not fit {} coordinates; left"
                  + " out",
              spec.jobId(),
              partial.round,
              partial.units.length,
              offset,
              units.length);
        } else {
          for (int i = 0; i < partial.units.length; i++) {
            units[offset + i] += partial.units[i];
          }
        }
      }
    }
    combined.contributions += partial.contributions;
    combined.clipped += partial.clipped;
    combined.received = Arrays.copyOf(combined.received, combined.received.length + 1);
    combined.received[combined.received.length - 1] = partial.shardKey;
    finishOrSave(store, partial.round, combined, out);
  }

  public void sealed(Store store, RoundSignal sealed, Output out) {
    CombinedRound combined = roundOf(store, sealed.round);
    combined.sealed = sealed;
    finishOrSave(store, sealed.round, combined, out);
  }

  /** A noise block's share of a round: kept until the round is released. */
  private void noiseBlock(Store store, RoundPartial block) {
    RoundNoise noise = store.noise().get(block.round);
    if (noise == null) {
      noise = new RoundNoise(new double[spec.model().dimension()]);
    }
    if (Arrays.asList(noise.received).contains(block.shardKey)) {
      return; // the same block again (a replayed record): the same values
    }
    System.arraycopy(block.noise, 0, noise.values, block.noiseOffset, block.noise.length);
    noise.received = Arrays.copyOf(noise.received, noise.received.length + 1);
    noise.received[noise.received.length - 1] = block.shardKey;
    store.noise().put(block.round, noise);
  }

  /** A round is complete with its seal, its shards' partials and, if correlated, every block. */
  private boolean complete(Store store, long round, CombinedRound combined) {
    if (!combined.complete()) {
      return false;
    }
    if (!spec.correlated()) {
      return true;
    }
    RoundNoise noise = store.noise().get(round);
    return noise != null && noise.received.length == NoiseBlocks.blocks(spec);
  }

  private static CombinedRound roundOf(Store store, long round) {
    CombinedRound combined = store.rounds().get(round);
    return combined != null ? combined : new CombinedRound();
  }

  private void finishOrSave(Store store, long round, CombinedRound combined, Output out) {
    if (complete(store, round, combined) && superseded(store, combined.sealed)) {
      store.rounds().remove(round);
      store.noise().remove(round);
      drawn.remove(round);
      return;
    }
    if (!complete(store, round, combined)
        || (combined.sealed.release && !hasBase(store, combined.sealed))) {
      store.rounds().put(round, combined);
      return;
    }
    finish(store, round, combined, out);
    boolean finishedOne = true;
    while (finishedOne) {
      finishedOne = false;
      java.util.List<Long> pending = new java.util.ArrayList<>();
      store.rounds().rounds().forEach(pending::add);
      java.util.Collections.sort(pending);
      for (long r : pending) {
        CombinedRound waiting = store.rounds().get(r);
        boolean complete = complete(store, r, waiting);
        if (complete && superseded(store, waiting.sealed)) {
          store.rounds().remove(r);
          store.noise().remove(r);
          drawn.remove(r);
          finishedOne = true;
          break;
        }
        if (complete && (!waiting.sealed.release || hasBase(store, waiting.sealed))) {
          finish(store, r, waiting, out);
          finishedOne = true;
          break;
        }
      }
    }
  }

  /**
   * Whether a model of this round or a later one is already out: released by this combiner, or
   * committed on the topics when the job started. A round restored pending (sealed in an unaligned
   * checkpoint, or in a savepoint older than the topics) must then not be computed again: its
   * release would come after a newer one, or (with secure noise) conflict with the public copy.
   */
  private boolean superseded(Store store, RoundSignal sealed) {
    if (!sealed.release) {
      return false;
    }
    ModelState state = store.model();
    return (state != null && state.round >= sealed.round)
        || (floor.model() != null && floor.modelRound() >= sealed.round);
  }

  /** Whether the model round {@code sealed} trains on is at hand (see {@link #baseModel}). */
  private boolean hasBase(Store store, RoundSignal sealed) {
    if (spec.statisticsJob()) {
      return true; // each round's release replaces the last: no base to wait for
    }
    ModelState state = store.model();
    long base = sealed.baseModelRound;
    return (state != null && state.round == base)
        || sealed.carriedModel != null
        || base == 0
        || (floor.model() != null && floor.modelRound() == base);
  }

  private void finish(Store store, long round, CombinedRound combined, Output out) {
    store.rounds().remove(round);
    RoundSignal sealed = combined.sealed;
    RoundNoise correlated = spec.correlated() ? store.noise().get(round) : null;
    store.noise().remove(round);
    if (!sealed.release) {
      drawn.remove(round);
      out.withhold(sealed, combined);
      return;
    }
    long started = System.nanoTime();
    if (spec.distributedNoise() != null) {
      releaseDistributed(store, round, combined, sealed, started, out);
      return;
    }
    long[] units = combined.units != null ? combined.units : new long[spec.model().dimension()];
    if (sealed.carriedUnits != null) {
      for (int i = 0; i < units.length; i++) {
        units[i] += sealed.carriedUnits[i];
      }
    }
    // The shards' units are relative to the round's C, and so are the sensitivity and the noise.
    double clipNorm = clipNormOf(sealed.clipNorm);
    // Secure aggregation: clients clipped themselves, so the sum is bounded here, by bounds fixed
    // in the spec, never by the round's count: one honest client moves the bounded sum by at most
    // C, whatever the others sent (SumBound).
    long bound = spec.rounds().maxClients();
    boolean folded = spec.secureAggregation() && SumBound.fold(units, bound);
    double[] sum =
        ClippedSum.wrap(
                spec.clippingPolicy(clipNorm),
                spec.model().tensorSizes(),
                units,
                combined.contributions)
            .toDoubles();
    if (spec.secureAggregation() && (SumBound.scaleToNorm(sum, bound, clipNorm) || folded)) {
      LOG.warn(
          "job {}: round {}'s unmasked sum was beyond what rounds.maxClients ({}) clients clipped"
              + " to C can send; it was bounded (a client sent values beyond its clip norm)",
          spec.jobId(),
          round,
          bound);
    }
    Drawn noise = drawn.remove(round);
    if (correlated != null) {
      noise = new Drawn(clipNorm, correlated.values);
    } else if (noise == null || noise.clipNorm() != clipNorm) {
      noise = new Drawn(clipNorm, draw(round, clipNorm));
    }
    step(store, round, sealed, combined, sum, noise.noise(), started, out);
  }

  /** DP-FedAvg's server step with the noisy average of {@code sum}, then the release. */
  private void step(
      Store store,
      long round,
      RoundSignal sealed,
      CombinedRound combined,
      double[] sum,
      double[] noise,
      long started,
      Output out) {
    ModelState base = baseModel(store, sealed);
    double[] average = NoisyAverage.average(sum, noise, spec.rounds().expectedClients());
    try {
      spec.serverOptimizer().step(base.model, average, base.optimizer);
    } catch (IllegalArgumentException e) {
      // A step that would leave the model non-finite (a huge C or learning rate): the round is
      // charged, so it is released, with the model unchanged; never a restart loop.
      LOG.error(
          "job {}: round {}'s server step was refused, the model stays as it was: {}",
          spec.jobId(),
          round,
          e.getMessage());
    }
    store.saveModel(new ModelState(base.model, round, base.optimizer));
    out.release(sealed, combined, base.model, System.nanoTime() - started);
  }

  /**
   * A round of distributed noise: an unmasked sum already holds the clients' noise shares, so it is
   * topped up with the shares of the inputs that did not arrive, decoded (residues, rotation back,
   * grid to model units) and released; a round without a sum (not unmasked, or empty) gets the
   * job's central noise instead, as in every secure round without one.
   */
  private void releaseDistributed(
      Store store,
      long round,
      CombinedRound combined,
      RoundSignal sealed,
      long started,
      Output out) {
    double clipNorm = clipNormOf(sealed.clipNorm);
    boolean unmasked =
        combined.units != null
            && sealed.shards.length > 0
            && combined.units.length == spec.maskedDimension();
    double[] sum;
    double[] noise;
    if (unmasked) {
      // Topped up to maxClients shares from the round's own stream: a restore releases the same.
      sum =
          new GridEncoder(spec.distributedNoise(), spec.jobId(), round)
              .release(
                  combined.units,
                  combined.contributions,
                  clipNorm,
                  noiseSource.forRound(NoiseStreams.sum(spec), round).bits());
      noise = new double[sum.length];
    } else {
      sum = new double[spec.model().dimension()];
      noise = draw(round, clipNorm);
    }
    drawn.remove(round);
    step(store, round, sealed, combined, sum, noise, started, out);
  }

  private double[] draw(long round, double clipNorm) {
    NoiseStream stream = noiseSource.forRound(NoiseStreams.sum(spec), round);
    return spec.mechanism(clipNorm).noise(spec.model().dimension(), stream);
  }

  /**
   * The model the round {@code sealed} trains on, with the server optimizer's state: this
   * combiner's last, the one an earlier version's state carried, the topic's, or round 0's (the
   * last three with fresh optimizer state).
   */
  private ModelState baseModel(Store store, RoundSignal sealed) {
    long round = sealed.baseModelRound;
    if (spec.statisticsJob()) {
      // The release step replaces the model: what came before (of any query's size) is unused.
      int d = spec.model().dimension();
      return new ModelState(new float[d], round, spec.serverOptimizer().initialState(d));
    }
    ModelState state = store.model();
    if (state != null && state.round == round && state.model != null) {
      ServerOptimizer.State moments = state.optimizer;
      if (moments == null || !spec.serverOptimizer().fits(moments, state.model.length)) {
        // State from before server optimizers, or from a spec with another optimizer.
        moments = spec.serverOptimizer().initialState(state.model.length);
      }
      return new ModelState(state.model, round, moments);
    }
    float[] model = null;
    if (sealed.carriedModel != null) {
      model = sealed.carriedModel.clone();
    } else if (floor.model() != null && floor.modelRound() == round) {
      model = floor.model().clone();
    } else if (round == 0) {
      model = spec.initialWeights();
    }
    if (model != null) {
      return new ModelState(model, round, spec.serverOptimizer().initialState(model.length));
    }
    throw new IllegalStateException(
        "job "
            + spec.jobId()
            + ": the model of round "
            + round
            + " is neither in state (round "
            + (state == null ? "none" : state.round)
            + ") nor on the models topic (round "
            + floor.modelRound()
            + ")");
  }
}
