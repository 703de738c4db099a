package dev.privagg.job.combine;

import dev.privagg.correlated.BufferedToeplitz;
import dev.privagg.job.CombinedRound;
import dev.privagg.job.ModelState;
import dev.privagg.job.NoiseBuffers;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.RoundSignal;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.state.RoundTable;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.privacy.ClippedSum;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.privacy.NoisyAverage;
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

    /** The correlated-noise generator, or null before the job's first correlated release. */
    NoiseBuffers noiseBuffers();

    void saveNoiseBuffers(NoiseBuffers buffers);
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
    drawn.keySet().removeIf(r -> r < round - 1);
    double c = clipNormOf(clipNorm);
    drawn.computeIfAbsent(round, r -> new Drawn(c, draw(r, c)));
  }

  /** A signal's C, or the spec's for signals of versions that did not carry one. */
  private double clipNormOf(double signalled) {
    return signalled > 0 ? signalled : spec.privacy().clipNorm();
  }

  public void partial(Store store, RoundPartial partial, Output out) {
    CombinedRound combined = roundOf(store, partial.round);
    if (partial.units != null) {
      if (combined.units == null) {
        combined.units = partial.units;
      } else {
        long[] units = combined.units;
        for (int i = 0; i < units.length; i++) {
          units[i] += partial.units[i];
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

  private static CombinedRound roundOf(Store store, long round) {
    CombinedRound combined = store.rounds().get(round);
    return combined != null ? combined : new CombinedRound();
  }

  private void finishOrSave(Store store, long round, CombinedRound combined, Output out) {
    if (combined.complete() && superseded(store, combined.sealed)) {
      store.rounds().remove(round);
      drawn.remove(round);
      return;
    }
    if (!combined.complete() || (combined.sealed.release && !hasBase(store, combined.sealed))) {
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
        if (waiting.complete() && superseded(store, waiting.sealed)) {
          store.rounds().remove(r);
          drawn.remove(r);
          finishedOne = true;
          break;
        }
        if (waiting.complete() && (!waiting.sealed.release || hasBase(store, waiting.sealed))) {
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
    if (!sealed.release) {
      drawn.remove(round);
      out.withhold(sealed, combined);
      return;
    }
    long started = System.nanoTime();
    long[] units = combined.units != null ? combined.units : new long[spec.model().dimension()];
    if (sealed.carriedUnits != null) {
      for (int i = 0; i < units.length; i++) {
        units[i] += sealed.carriedUnits[i];
      }
    }
    // The shards' units are relative to the round's C, and so are the sensitivity and the noise.
    double clipNorm = clipNormOf(sealed.clipNorm);
    double[] sum =
        ClippedSum.wrap(
                spec.clippingPolicy(clipNorm),
                spec.model().tensorSizes(),
                units,
                combined.contributions)
            .toDoubles();
    Drawn noise = drawn.remove(round);
    if (noise == null || noise.clipNorm() != clipNorm) {
      noise = new Drawn(clipNorm, draw(round, clipNorm));
    }
    if (spec.correlated()) {
      correlate(store, round, noise.noise(), spec.mechanism(clipNorm).sigma());
    }
    ModelState base = baseModel(store, sealed);
    double[] average = NoisyAverage.average(sum, noise.noise(), spec.rounds().expectedClients());
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
   * The sum's noise: N(0, sigma^2) per coordinate, or with correlated noise the fresh Z_t (unit
   * variance), which {@link #correlate} turns into sigma (C^-1 Z)_t at the release.
   */
  private double[] draw(long round, double clipNorm) {
    NoiseStream stream = noiseSource.forRound(NoiseStreams.sum(spec), round);
    if (spec.correlated()) {
      double[] fresh = new double[spec.model().dimension()];
      stream.addGaussian(fresh, 1.0);
      return fresh;
    }
    return spec.mechanism(clipNorm).noise(spec.model().dimension(), stream);
  }

  /**
   * Turns round {@code round}'s fresh Z_t into sigma (C^-1 Z)_t in place and moves the generator to
   * {@code round}. Rounds between the buffers' round and this one (withheld, skipped, or taken over
   * from an earlier run's topics) still pass their Z through the buffers, drawn again from the same
   * reproducible stream: the buffers after round t depend on every Z up to t. Buffers ahead of this
   * round (a savepoint older than them cannot be: the combiner's state holds both) or built for
   * another mechanism are refused.
   */
  private void correlate(Store store, long round, double[] fresh, double sigma) {
    BufferedToeplitz strategy = spec.privacy().correlated().strategy();
    String mechanism = CorrelatedNoise.describe(spec, noiseSource);
    NoiseBuffers state = store.noiseBuffers();
    if (state == null) {
      state =
          new NoiseBuffers(0, mechanism, new double[strategy.buffers()][spec.model().dimension()]);
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
              + ": the noise buffers in state are at round "
              + state.round
              + ", at or past round "
              + round
              + " being released; restore the checkpoint or savepoint these rounds came from");
    }
    double[] passing = new double[fresh.length];
    for (long r = state.round + 1; r < round; r++) {
      java.util.Arrays.fill(passing, 0);
      noiseSource.forRound(NoiseStreams.sum(spec), r).addGaussian(passing, 1.0);
      BufferedToeplitz.correlate(strategy, state.buffers, passing);
    }
    BufferedToeplitz.correlate(strategy, state.buffers, fresh);
    for (int i = 0; i < fresh.length; i++) {
      fresh[i] *= sigma;
    }
    state.round = round;
    store.saveNoiseBuffers(state);
  }

  /**
   * The model the round {@code sealed} trains on, with the server optimizer's state: this
   * combiner's last, the one an earlier version's state carried, the topic's, or round 0's (the
   * last three with fresh optimizer state).
   */
  private ModelState baseModel(Store store, RoundSignal sealed) {
    long round = sealed.baseModelRound;
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
