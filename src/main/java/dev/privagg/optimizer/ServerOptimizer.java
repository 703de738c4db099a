package dev.privagg.optimizer;

import java.io.Serial;
import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The server's step on the (noisy) average client delta Delta_t, the mean of client model minus
 * server model, so the model moves along Delta. Every optimizer here only post-processes the
 * private average, so none of them changes the privacy charge.
 *
 * <ul>
 *   <li>{@link Kind#SGD}, FedAvg: x += eta Delta_t.
 *   <li>{@link Kind#AVGM}, FedAvgM (Hsu, Qi, Brown 2019): m = beta m + Delta_t; x += eta m.
 *   <li>{@link Kind#ADAM}, FedAdam (Reddi et al., "Adaptive Federated Optimization", ICLR 2021,
 *       Algorithm 2): m = b1 m + (1 - b1) Delta; v = b2 v + (1 - b2) Delta^2; x += eta m / (sqrt(v)
 *       + tau), per coordinate.
 *   <li>{@link Kind#YOGI}, FedYogi (same Algorithm 2): as Adam but v = v - (1 - b2) Delta^2 sign(v
 *       - Delta^2), so v moves additively towards Delta^2 instead of geometrically.
 * </ul>
 *
 * <p>As in the paper there is no bias correction; v starts at tau^2 (Algorithm 2 asks v_{-1} >=
 * tau^2) and m at zero. Arithmetic is in double; the model and both moments are stored as float, to
 * keep a 1M-parameter state at 8 MB. Unused parameters are ignored ({@link #sgd} and {@link #avgm}
 * fill them with 0 and {@link #DEFAULT_TAU}).
 *
 * <p>A step is all or nothing: a non-finite delta, or a delta so large that the float model or a
 * moment would overflow, is refused with {@link IllegalArgumentException} before anything changes.
 */
public record ServerOptimizer(
    Kind kind, double learningRate, double beta1, double beta2, double tau)
    implements Serializable {

  /** The paper's beta1 = 0.9, beta2 = 0.99, tau = 1e-3; FedAvgM's momentum 0.9. */
  public static final double DEFAULT_BETA1 = 0.9,
      DEFAULT_BETA2 = 0.99,
      DEFAULT_TAU = 1e-3,
      DEFAULT_MOMENTUM = 0.9;

  /** The server optimizer's family, named in job specs by {@link #specName()}. */
  public enum Kind {
    SGD,
    AVGM,
    ADAM,
    YOGI,
    /** A statistics job's: the model is the round's noisy average itself. */
    RELEASE;

    /**
     * The training optimizer named {@code name} ("sgd", "avgm", "adam", "yogi"; case ignored);
     * {@link #RELEASE} is a statistics job's and is not named.
     */
    public static Kind parse(String name) {
      List<Kind> training = List.of(SGD, AVGM, ADAM, YOGI);
      if (name != null) {
        for (Kind kind : training) {
          if (kind.specName().equals(name.toLowerCase(Locale.ROOT))) {
            return kind;
          }
        }
      }
      throw new IllegalArgumentException(
          "server optimizer must be one of "
              + training.stream().map(Kind::specName).toList()
              + ", was "
              + name);
    }

    /** The lower-case name used in job specs. */
    public String specName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Validates the parameters (positive conditions, so NaN fails). */
  public ServerOptimizer {
    Objects.requireNonNull(kind, "kind");
    if (!(learningRate > 0 && Double.isFinite(learningRate))) {
      throw new IllegalArgumentException(
          "learningRate must be > 0 and finite, was " + learningRate);
    }
    if (!(beta1 >= 0 && beta1 < 1)) {
      throw new IllegalArgumentException("beta1 must be in [0, 1), was " + beta1);
    }
    if (!(beta2 >= 0 && beta2 < 1)) {
      throw new IllegalArgumentException("beta2 must be in [0, 1), was " + beta2);
    }
    if (!(tau > 0 && Double.isFinite(tau))) {
      throw new IllegalArgumentException("tau must be > 0 and finite, was " + tau);
    }
  }

  /** FedAvg: x += eta Delta. */
  public static ServerOptimizer sgd(double learningRate) {
    return new ServerOptimizer(Kind.SGD, learningRate, 0, 0, DEFAULT_TAU);
  }

  /** FedAvgM with {@code beta1 = momentum}: m = momentum m + Delta; x += eta m. */
  public static ServerOptimizer avgm(double learningRate, double momentum) {
    return new ServerOptimizer(Kind.AVGM, learningRate, momentum, 0, DEFAULT_TAU);
  }

  /**
   * A statistics job's step: x = Delta, the round's noisy average replaces the previous release
   * (each round is a query of its own).
   */
  public static ServerOptimizer release() {
    return new ServerOptimizer(Kind.RELEASE, 1, 0, 0, DEFAULT_TAU);
  }

  /** FedAdam, Reddi et al. 2021, Algorithm 2. */
  public static ServerOptimizer adam(double learningRate, double beta1, double beta2, double tau) {
    return new ServerOptimizer(Kind.ADAM, learningRate, beta1, beta2, tau);
  }

  /** FedYogi, Reddi et al. 2021, Algorithm 2. */
  public static ServerOptimizer yogi(double learningRate, double beta1, double beta2, double tau) {
    return new ServerOptimizer(Kind.YOGI, learningRate, beta1, beta2, tau);
  }

  /**
   * The momentum through which the model sums the noisy averages, when its steps are linear in
   * them: 0 for SGD, beta for FedAvgM; NaN for Adam and Yogi, which divide by a moment.
   */
  public double linearMomentum() {
    return switch (kind) {
      case SGD -> 0;
      case AVGM -> beta1;
      case ADAM, YOGI, RELEASE -> Double.NaN;
    };
  }

  /** True for avgm, adam and yogi: they keep state between rounds. */
  public boolean stateful() {
    return kind != Kind.SGD && kind != Kind.RELEASE;
  }

  /**
   * A fresh state for a model of {@code dimension} values: m = 0, and for Adam and Yogi v = tau^2
   * (Algorithm 2's v_{-1} >= tau^2). SGD gets empty arrays, AVGM an empty second moment.
   */
  public State initialState(int dimension) {
    if (dimension < 0) {
      throw new IllegalArgumentException("dimension must be >= 0, was " + dimension);
    }
    State state = new State();
    state.firstMoment = new float[stateful() ? dimension : 0];
    state.secondMoment = new float[adaptive() ? dimension : 0];
    Arrays.fill(state.secondMoment, (float) (tau * tau));
    state.steps = 0;
    return state;
  }

  /**
   * Moves {@code model} in place by one server step on {@code averageDelta} and updates {@code
   * state} in place. Refuses, before changing anything, mismatched lengths, a state of the wrong
   * shape, a non-finite delta, and a step whose result would not be finite in float.
   */
  public void step(float[] model, double[] averageDelta, State state) {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(averageDelta, "averageDelta");
    Objects.requireNonNull(state, "state");
    int n = model.length;
    if (averageDelta.length != n) {
      throw new IllegalArgumentException(
          "averageDelta must have the model's length " + n + ", was " + averageDelta.length);
    }
    requireLength("state.firstMoment", state.firstMoment, stateful() ? n : 0);
    requireLength("state.secondMoment", state.secondMoment, adaptive() ? n : 0);
    for (int i = 0; i < n; i++) {
      if (!Double.isFinite(averageDelta[i])) {
        throw new IllegalArgumentException(
            "averageDelta must be finite, was " + averageDelta[i] + " at index " + i);
      }
    }

    // Computed into fresh arrays and copied back only when all are finite: all or nothing.
    float[] x = new float[n];
    float[] m = new float[state.firstMoment.length];
    float[] v = new float[state.secondMoment.length];
    for (int i = 0; i < n; i++) {
      double d = averageDelta[i];
      double move;
      switch (kind) {
        case SGD -> move = d;
        case RELEASE -> move = d; // x = Delta below, exactly
        case AVGM -> {
          double mi = beta1 * state.firstMoment[i] + d;
          m[i] = (float) mi;
          move = mi;
        }
        case ADAM, YOGI -> {
          double mi = beta1 * state.firstMoment[i] + (1 - beta1) * d;
          double vPrev = state.secondMoment[i];
          double d2 = d * d;
          double vi =
              kind == Kind.ADAM
                  ? beta2 * vPrev + (1 - beta2) * d2
                  : vPrev - (1 - beta2) * d2 * Math.signum(vPrev - d2);
          m[i] = (float) mi;
          v[i] = (float) vi;
          move = mi / (Math.sqrt(vi) + tau);
        }
        default -> throw new IllegalStateException("unknown kind " + kind);
      }
      x[i] = kind == Kind.RELEASE ? (float) move : (float) (model[i] + learningRate * move);
      if (!Float.isFinite(x[i])
          || (m.length > 0 && !Float.isFinite(m[i]))
          || (v.length > 0 && !Float.isFinite(v[i]))) {
        throw new IllegalArgumentException(
            "step would leave the model or a moment non-finite at index "
                + i
                + " (model "
                + model[i]
                + ", averageDelta "
                + d
                + ")");
      }
    }
    System.arraycopy(x, 0, model, 0, n);
    System.arraycopy(m, 0, state.firstMoment, 0, m.length);
    System.arraycopy(v, 0, state.secondMoment, 0, v.length);
    state.steps++;
  }

  /**
   * Whether {@code state} has the shape this optimizer keeps for a model of {@code dimension}
   * values (a state saved under another optimizer, or none, does not).
   */
  public boolean fits(State state, int dimension) {
    return state != null
        && state.firstMoment != null
        && state.secondMoment != null
        && state.firstMoment.length == (stateful() ? dimension : 0)
        && state.secondMoment.length == (adaptive() ? dimension : 0);
  }

  private boolean adaptive() {
    return kind == Kind.ADAM || kind == Kind.YOGI;
  }

  private static void requireLength(String name, float[] array, int expected) {
    if (array == null || array.length != expected) {
      throw new IllegalArgumentException(
          name
              + " must have length "
              + expected
              + " for this optimizer and model, was "
              + (array == null ? "null" : array.length));
    }
  }

  /** Mutable optimizer state, a Flink POJO: public no-arg constructor, public non-final fields. */
  public static class State implements Serializable {
    @Serial private static final long serialVersionUID = 1L;

    /** m: the avgm momentum buffer, or adam's and yogi's first moment; empty for sgd. */
    public float[] firstMoment = new float[0];

    /** v for adam and yogi; empty otherwise. */
    public float[] secondMoment = new float[0];

    /** Server steps taken with this state. */
    public long steps;

    public State() {}
  }
}
