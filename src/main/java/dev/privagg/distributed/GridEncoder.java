package dev.privagg.distributed;

import dev.privagg.privacy.DiscreteGaussian;
import dev.privagg.secagg.Quantizer;
import dev.privagg.secagg.RandomizedHadamard;
import java.util.random.RandomGenerator;

/**
 * A client's side of the distributed discrete Gaussian ({@link DistributedNoisePlan}): clip, scale,
 * rotate, round conditionally, add the noise share, keep the low bits; and the job's side: read the
 * unmasked sum's words as signed residues, rotate back and scale to model units.
 */
public final class GridEncoder {
  /**
   * Conditional rounding succeeds with probability at least 1 - beta = 0.39 per try (KLS21): 200
   * tries all fail with probability below 10^-40.
   */
  static final int MAX_ROUNDING_TRIES = 200;

  private final DistributedNoisePlan plan;
  private final RandomizedHadamard rotation;

  /** The encoder of a job's round: its rotation is the round's. */
  public GridEncoder(DistributedNoisePlan plan, String jobId, long round) {
    this.plan = plan;
    this.rotation = new RandomizedHadamard(jobId, round, plan.dimension());
  }

  /**
   * The words a client masks: {@code update} (model units, length d) clipped to L2 norm {@code
   * clipNorm}, on the grid, plus a noise share, each reduced modulo 2^bits.
   *
   * @param random the rounding's coins and the noise: a CSPRNG in a client, seeded in tests
   * @throws IllegalArgumentException if a value is NaN or infinite, or the length is not d
   */
  public long[] encode(double[] update, double clipNorm, RandomGenerator random) {
    long[] units = round(update, clipNorm, random);
    DiscreteGaussian share = plan.share();
    long mask = plan.wordMask();
    for (int j = 0; j < units.length; j++) {
      units[j] = (units[j] + share.sample(random)) & mask;
    }
    return units;
  }

  /**
   * The rounded, rotated, scaled update without noise, as signed integers of squared norm at most
   * {@code plan.maxSquaredNorm()}.
   */
  long[] round(double[] update, double clipNorm, RandomGenerator random) {
    if (update.length != plan.dimension()) {
      throw new IllegalArgumentException(
          "update has " + update.length + " values, the plan " + plan.dimension());
    }
    if (!(clipNorm > 0 && Double.isFinite(clipNorm))) {
      throw new IllegalArgumentException("clipNorm must be > 0 and finite, was " + clipNorm);
    }
    double maxAbs = 0;
    for (int j = 0; j < update.length; j++) {
      if (!Double.isFinite(update[j])) {
        throw new IllegalArgumentException("update[" + j + "] must be finite, was " + update[j]);
      }
      maxAbs = Math.max(maxAbs, Math.abs(update[j]));
    }
    double[] scaled = new double[update.length];
    if (maxAbs > 0) {
      double norm = Quantizer.norm(update, maxAbs);
      double factor = plan.unitsPerClipNorm() / Math.max(norm, clipNorm);
      for (int j = 0; j < update.length; j++) {
        scaled[j] = update[j] * factor;
      }
    }
    double[] rotated = rotation.rotate(scaled);
    long[] units = new long[rotated.length];
    for (int attempt = 0; attempt < MAX_ROUNDING_TRIES; attempt++) {
      if (roundOnce(rotated, units, random)) {
        return units;
      }
    }
    // Below 1e-40 under a plan the client checked. Failing loudly would let a job that set the
    // bound learn which updates are large; the zero vector is sent, whatever the update was.
    return new long[rotated.length];
  }

  /** One randomized rounding; true if its squared norm is within the plan's bound. */
  private boolean roundOnce(double[] rotated, long[] units, RandomGenerator random) {
    long limit = plan.maxSquaredNorm();
    long squares = 0;
    boolean within = true;
    for (int j = 0; j < rotated.length; j++) {
      double floor = Math.floor(rotated[j]);
      units[j] = (long) floor + (random.nextDouble() < rotated[j] - floor ? 1 : 0);
      if (within) {
        // |units[j]| <= 2^30 + 1, so a square is below 2^62 and the sum stops past the limit.
        squares += units[j] * units[j];
        within = squares <= limit;
      }
    }
    return within;
  }

  /**
   * The sum in model units (length d) from the unmasked sum's words (length p, modulo 2^64): each
   * word's low bits as a residue in [-2^(bits-1), 2^(bits-1)), rotated back, divided by the grid.
   */
  public double[] decode(long[] sum, double clipNorm) {
    return toModelUnits(residues(sum), clipNorm);
  }

  /**
   * What a round releases: the unmasked sum of {@code inputs} masked inputs with {@code
   * plan.maxInputs() - inputs} shares of the job's added to its words, modulo 2^bits like the
   * clients' (so the wrap is one post-processing of the sum of maxInputs shares whoever sent), then
   * decoded. Every release thus holds the noise of maxInputs inputs: a sum of the senders' shares
   * alone would differ in variance between neighbouring cohorts (one client and its share fewer),
   * which KLS21's bound, a bound on the shift, does not cover. The job's shares do not count
   * against a curious server, which knows them; the senders' honest shares (at least n_min) do.
   *
   * @param random the job's noise: a CSPRNG, or a keyed stream so a restored job releases the same
   */
  public double[] release(long[] sum, long inputs, double clipNorm, RandomGenerator random) {
    if (sum.length != plan.paddedDimension()) {
      throw new IllegalArgumentException(
          "sum has " + sum.length + " words, the plan " + plan.paddedDimension());
    }
    long[] words = sum.clone();
    long missing = Math.max(0, plan.maxInputs() - inputs);
    DiscreteGaussian share = plan.share();
    for (long k = 0; k < missing; k++) {
      for (int j = 0; j < words.length; j++) {
        words[j] += share.sample(random);
      }
    }
    return toModelUnits(residues(words), clipNorm);
  }

  private long[] residues(long[] sum) {
    if (sum.length != plan.paddedDimension()) {
      throw new IllegalArgumentException(
          "sum has " + sum.length + " words, the plan " + plan.paddedDimension());
    }
    long mask = plan.wordMask();
    long half = 1L << (plan.bits() - 1);
    long[] y = new long[sum.length];
    for (int j = 0; j < sum.length; j++) {
      long w = sum[j] & mask;
      y[j] = w >= half ? w - (mask + 1) : w;
    }
    return y;
  }

  private double[] toModelUnits(long[] residues, double clipNorm) {
    double[] y = new double[residues.length];
    for (int j = 0; j < y.length; j++) {
      y[j] = residues[j];
    }
    rotation.invert(y);
    double valuePerUnit = clipNorm / plan.unitsPerClipNorm();
    double[] out = new double[plan.dimension()];
    for (int j = 0; j < out.length; j++) {
      out[j] = y[j] * valuePerUnit;
    }
    return out;
  }
}
