package dev.privagg.job;

import dev.privagg.privacy.ClippedSum;
import dev.privagg.privacy.NoiseSource;
import dev.privagg.privacy.NoiseStream;
import dev.privagg.privacy.NoisyAverage;
import dev.privagg.spec.JobSpec;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The release step of one job, without Flink: adds up a sealed round's partial sums, adds the
 * round's noise and moves the model (DP-FedAvg's server step).
 *
 * <p>The noise does not depend on the data: it is drawn when the round opens, from the job's noise
 * source for (models topic, job id, round), so closing a round costs a sum, an add and an encode.
 * Drawn noise is kept in memory only; after a restore it is drawn again at the close (with a keyed
 * source, the same values). The stream's first value is the minimum-cohort rule's, which the
 * decider draws.
 *
 * <p>Partials and seals come on separate channels, so a later round may be complete before an
 * earlier one: a round is released only once the model it trains on is there, and each release
 * looks for rounds that were waiting on it.
 */
final class CombinedRounds {
  /** The combiner's state. */
  interface Store {
    /** Rounds with partials or a seal in, not yet released. */
    RoundTable<CombinedRound> rounds();

    ModelState model();

    void saveModel(ModelState model);
  }

  /** What a finished round turns into. */
  interface Output {
    /** {@code model}: the new model, to read during the call only. */
    void release(RoundSignal sealed, CombinedRound sums, float[] model, long noiseNanos);

    void withhold(RoundSignal sealed, CombinedRound sums);
  }

  private final JobSpec spec;
  private final NoiseSource noiseSource;
  private final LedgerFloor floor;
  private final Map<Long, double[]> drawn = new HashMap<>();

  CombinedRounds(JobSpec spec, NoiseSource noiseSource, LedgerFloor floor) {
    this.spec = spec;
    this.noiseSource = noiseSource;
    this.floor = floor;
  }

  /**
   * The name of a job's noise streams, one per round: the models topic and the job id. A keyed
   * source then gives the same noise to a replay of the round (same members from the same log), and
   * other noise to the same job id published elsewhere; two different releases of one round on one
   * models topic never both become public (see {@link PublicRounds}).
   */
  static String noiseStream(JobSpec spec) {
    return spec.topics().models() + "/" + spec.jobId();
  }

  /** Round {@code round} opened: draw its noise now, off the close's path. */
  void opened(long round) {
    drawn.keySet().removeIf(r -> r < round - 1);
    drawn.computeIfAbsent(round, this::draw);
  }

  void partial(Store store, RoundPartial partial, Output out) {
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

  void sealed(Store store, RoundSignal sealed, Output out) {
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
    double[] sum =
        ClippedSum.wrap(
                spec.clippingPolicy(), spec.model().tensorSizes(), units, combined.contributions)
            .toDoubles();
    double[] noise = drawn.remove(round);
    float[] model = baseModel(store, sealed);
    NoisyAverage.applyDrawn(
        model,
        sum,
        noise != null ? noise : draw(round),
        spec.rounds().expectedClients(),
        spec.serverLearningRate());
    store.saveModel(new ModelState(model, round));
    out.release(sealed, combined, model, System.nanoTime() - started);
  }

  private double[] draw(long round) {
    NoiseStream stream = noiseSource.forRound(noiseStream(spec), round);
    if (spec.rounds().minimumCohort() > 0) {
      stream.nextStandardNormal(); // the decider's draw for the noisy count
    }
    return spec.mechanism().noise(spec.model().dimension(), stream);
  }

  /**
   * The model the round {@code sealed} trains on: this combiner's last, the one an earlier
   * version's state carried, the topic's, or round 0's.
   */
  private float[] baseModel(Store store, RoundSignal sealed) {
    long round = sealed.baseModelRound;
    ModelState state = store.model();
    if (state != null && state.round == round && state.model != null) {
      return state.model;
    }
    if (sealed.carriedModel != null) {
      return sealed.carriedModel.clone();
    }
    if (floor.model() != null && floor.modelRound() == round) {
      return floor.model().clone();
    }
    if (round == 0) {
      return spec.initialWeights();
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
