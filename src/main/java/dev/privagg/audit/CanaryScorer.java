package dev.privagg.audit;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Locale;

/**
 * The canaries' scores over a job's released models, read one model at a time in round order so a
 * long run never holds more than two models (Andrew et al., ICLR 2024, Sec. 3 and 5).
 *
 * <p>Each round's model delta Delta_t = x_t - x_{t-1} is the (noisy) step the server took; a
 * canary's cosine with it is its score for the round (0 for a zero delta, as the reference's
 * divide_no_nan). Three statistics per canary:
 *
 * <ul>
 *   <li>{@link Statistic#MAX}: the maximum over rounds, the paper's statistic when all iterates are
 *       released;
 *   <li>{@link Statistic#SUM}: the sum over rounds, which adds up a canary that takes part in many
 *       rounds as the composition of its Gaussian releases does;
 *   <li>{@link Statistic#FINAL}: the cosine with x_T - x_0, the paper's final-model statistic,
 *       whose null is known in closed form (a uniform direction's cosine with any fixed vector).
 * </ul>
 *
 * <p>Under banded correlated noise (the deltas carry sigma (C^-1 Z)_t) a scorer built with C's
 * coefficients c_0..c_(b-1) first whitens: w_t = sum_k c_k Delta_(t-k) carries sigma Z_t, and a
 * canary sent in round s appears as c_k u in w_(s+k); MAX and SUM then read the matched filter
 * sum_k c_k cos(u, w_(s+k)) of each round s, the test a known C allows (one Gaussian per
 * participation, as the accounting charges), instead of each noisier delta on its own.
 */
public final class CanaryScorer {
  /** How a canary's per-round cosines become one score. */
  public enum Statistic {
    MAX,
    SUM,
    FINAL;

    /** The statistic named {@code name} ("max", "sum", "final"; case ignored). */
    public static Statistic parse(String name) {
      for (Statistic s : values()) {
        if (s.name().equalsIgnoreCase(name)) {
          return s;
        }
      }
      throw new IllegalArgumentException("statistic must be one of max, sum, final, was " + name);
    }

    /**
     * The score for an audit whose canaries take part {@code inEveryRound} (no sampling): the sum,
     * the composition's own statistic then; else the paper's max, which a canary absent from most
     * rounds does not dilute.
     */
    public static Statistic forParticipation(boolean inEveryRound) {
      return inEveryRound ? SUM : MAX;
    }

    /** The lower-case name used on the command line and in reports. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** One statistic's scores: inserted canaries (seen) and unseen ones (the null). */
  public record Scores(Statistic statistic, double[] inserted, double[] unseen) {}

  private final float[][] directions;
  private final int dims;

  /** C's first column when whitening banded noise; {1} scores the deltas as they are. */
  private final double[] whitening;

  /** The last b - 1 deltas, most recent first, that the next whitened row needs. */
  private final ArrayDeque<double[]> recentDeltas = new ArrayDeque<>();

  /**
   * Per canary, the matched filters of the last b rounds still taking terms, by round mod b; round
   * s is complete once w_(s+b-1) is in.
   */
  private final double[][] open;

  private final double[] max;
  private final double[] sum;
  private double[] initial;
  private double[] previous;
  private long previousRound = -1;
  private int deltas;

  /**
   * The bytes the directions of {@code count} inserted and as many unseen canaries take in {@code
   * dims} parameters (float32 each), the scorer's dominant memory.
   */
  public static long directionBytes(int count, int dims) {
    return 2L * count * dims * Float.BYTES;
  }

  /** Scores {@code canaries} (inserted and unseen) on models of {@code dims} parameters. */
  public CanaryScorer(CanarySet canaries, int dims) {
    this(canaries, dims, new double[] {1});
  }

  /**
   * As above, whitening banded correlated noise by C's first column {@code whitening} (unit norm,
   * {@code {1}} for independent noise) before MAX and SUM read the deltas.
   *
   * @throws IllegalArgumentException if the coefficients are empty, not finite or the first is 0
   */
  public CanaryScorer(CanarySet canaries, int dims, double[] whitening) {
    if (whitening.length == 0 || whitening[0] == 0) {
      throw new IllegalArgumentException("whitening needs C's first column, c_0 != 0");
    }
    for (double c : whitening) {
      if (!Double.isFinite(c)) {
        throw new IllegalArgumentException("whitening coefficients must be finite, was " + c);
      }
    }
    this.whitening = whitening.clone();
    int n = 2 * canaries.count();
    if ((long) n * dims > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          n + " canaries of " + dims + " parameters exceed what one process scores; use fewer");
    }
    this.dims = dims;
    this.directions = new float[n][];
    for (int j = 0; j < n; j++) {
      double[] u = canaries.direction(j, dims);
      directions[j] = new float[dims];
      for (int i = 0; i < dims; i++) {
        directions[j][i] = (float) u[i];
      }
    }
    this.max = new double[n];
    this.sum = new double[n];
    this.open = new double[n][whitening.length];
    Arrays.fill(max, Double.NEGATIVE_INFINITY);
  }

  /** Whether MAX and SUM read whitened rows (a banded C was given). */
  public boolean whitened() {
    return whitening.length > 1;
  }

  /**
   * Takes the model released in {@code round}, the first one the base (usually round 0); rounds
   * must increase, and a skipped round makes one delta span both.
   */
  public void accept(long round, double[] model) {
    if (model.length != dims) {
      throw new IllegalArgumentException(
          "round " + round + "'s model has " + model.length + " parameters, expected " + dims);
    }
    if (round <= previousRound) {
      throw new IllegalArgumentException(
          "models must come in increasing round order: round " + round + " after " + previousRound);
    }
    for (double v : model) {
      if (!Double.isFinite(v)) {
        throw new IllegalArgumentException("round " + round + "'s model has a non-finite value");
      }
    }
    if (previous == null) {
      initial = model.clone();
    } else {
      double[] delta = new double[dims];
      for (int i = 0; i < dims; i++) {
        delta[i] = model[i] - previous[i];
      }
      double[] cosines = cosines(whiten(delta));
      int b = whitening.length;
      // Row t = deltas adds c_(t-s) cos_t to each open round s in (t - b, t]; round t - b + 1 is
      // then complete and its slot starts round t + 1's.
      for (int j = 0; j < cosines.length; j++) {
        for (int k = 0; k < b && k <= deltas; k++) {
          open[j][(deltas - k) % b] += whitening[k] * cosines[j];
        }
        if (deltas - b + 1 >= 0) {
          int slot = (deltas - b + 1) % b;
          max[j] = Math.max(max[j], open[j][slot]);
          sum[j] += open[j][slot];
          open[j][slot] = 0;
        }
      }
      deltas++;
    }
    previous = model.clone();
    previousRound = round;
  }

  /** w_t = sum_k c_k Delta_(t-k), keeping the deltas the next rows need. */
  private double[] whiten(double[] delta) {
    if (whitening.length == 1) {
      return delta;
    }
    double[] w = new double[dims];
    for (int i = 0; i < dims; i++) {
      w[i] = whitening[0] * delta[i];
    }
    int k = 1;
    for (double[] earlier : recentDeltas) {
      for (int i = 0; i < dims; i++) {
        w[i] += whitening[k] * earlier[i];
      }
      k++;
    }
    recentDeltas.addFirst(delta);
    if (recentDeltas.size() > whitening.length - 1) {
      recentDeltas.removeLast();
    }
    return w;
  }

  /** The number of model deltas scored so far. */
  public int deltas() {
    return deltas;
  }

  /** The number of parameters of the scored models. */
  public int dims() {
    return dims;
  }

  /** The scores of {@code statistic}, once at least one delta has been scored. */
  public Scores scores(Statistic statistic) {
    if (deltas == 0) {
      throw new IllegalStateException(
          "no released round after the base model yet: nothing to score");
    }
    // Rounds whose later rows have not come yet (the last b - 1) count with the terms they have.
    double[] maxSoFar = max.clone();
    double[] sumSoFar = sum.clone();
    int b = whitening.length;
    for (int j = 0; j < maxSoFar.length; j++) {
      for (int s = Math.max(0, deltas - b + 1); s < deltas; s++) {
        maxSoFar[j] = Math.max(maxSoFar[j], open[j][s % b]);
        sumSoFar[j] += open[j][s % b];
      }
    }
    double[] all =
        switch (statistic) {
          case MAX -> maxSoFar;
          case SUM -> sumSoFar;
          case FINAL -> {
            double[] total = new double[dims];
            for (int i = 0; i < dims; i++) {
              total[i] = previous[i] - initial[i];
            }
            yield cosines(total);
          }
        };
    int half = all.length / 2;
    return new Scores(
        statistic, Arrays.copyOfRange(all, 0, half), Arrays.copyOfRange(all, half, all.length));
  }

  private double[] cosines(double[] v) {
    double squares = 0;
    for (double x : v) {
      squares += x * x;
    }
    double norm = Math.sqrt(squares);
    double[] out = new double[directions.length];
    if (norm == 0) {
      return out;
    }
    for (int j = 0; j < directions.length; j++) {
      float[] u = directions[j];
      double dot = 0;
      for (int i = 0; i < dims; i++) {
        dot += v[i] * u[i];
      }
      out[j] = dot / norm;
    }
    return out;
  }
}
