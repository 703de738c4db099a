package dev.privagg.optimizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.optimizer.ServerOptimizer.Kind;
import dev.privagg.optimizer.ServerOptimizer.State;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Server optimizers against steps worked out by hand from Reddi et al. 2021, Algorithm 2, and Hsu
 * et al. 2019. The hand examples use dyadic numbers, so moments are exact in float; only the square
 * root and the float model carry rounding, hence the 1e-6 tolerance.
 */
class ServerOptimizerTest {
  private static final double FLOAT_TOLERANCE = 1e-6;

  // eta = 0.5, b1 = 0.5, b2 = 0.75, tau = 0.5, so v starts at tau^2 = 0.25.
  private static final ServerOptimizer ADAM = ServerOptimizer.adam(0.5, 0.5, 0.75, 0.5);
  private static final ServerOptimizer YOGI = ServerOptimizer.yogi(0.5, 0.5, 0.75, 0.5);
  private static final double[] DELTA_1 = {2, -1};
  private static final double[] DELTA_2 = {0.5, 0.5};
  private static final double[] DELTA_3 = {0, -2};

  @Test
  void release_replacesTheModelByTheDelta_exactly() {
    ServerOptimizer release = ServerOptimizer.release();
    float[] model = {1e7f, -1, 0.1f};
    State state = release.initialState(3);

    release.step(model, new double[] {0.3, 2.5, -4e-8}, state);

    assertThat(model).containsExactly(0.3f, 2.5f, -4e-8f);
    assertThat(state.firstMoment).isEmpty();
    assertThat(release.stateful()).isFalse();
  }

  @Test
  void sgd_movesTheModelAlongTheDelta() {
    ServerOptimizer sgd = ServerOptimizer.sgd(0.5);
    float[] model = {1, -1, 0};
    State state = sgd.initialState(3);

    sgd.step(model, new double[] {2, 0.5, -4}, state);

    // x + eta * Delta = (1 + 1, -1 + 0.25, 0 - 2)
    assertThat(model).containsExactly(2f, -0.75f, -2f);
    assertThat(state.firstMoment).isEmpty();
    assertThat(state.secondMoment).isEmpty();
    assertThat(state.steps).isEqualTo(1);
  }

  @Test
  void sgd_equalsModelPlusEtaTimesDelta_onRandomInputs() {
    SplittableRandom random = new SplittableRandom(7);
    ServerOptimizer sgd = ServerOptimizer.sgd(0.3);
    float[] model = new float[50];
    double[] delta = new double[50];
    for (int i = 0; i < 50; i++) {
      model[i] = (float) random.nextGaussian();
      delta[i] = random.nextGaussian();
    }
    float[] expected = new float[50];
    for (int i = 0; i < 50; i++) {
      expected[i] = (float) (model[i] + 0.3 * delta[i]);
    }

    sgd.step(model, delta, sgd.initialState(50));

    assertThat(model).isEqualTo(expected);
  }

  @Test
  void avgm_followsTheMomentumRecurrence_overThreeSteps() {
    ServerOptimizer avgm = ServerOptimizer.avgm(0.5, 0.5);
    float[] model = {1, 1};
    State state = avgm.initialState(2);

    // m1 = 0.5 * 0 + (2, -1) = (2, -1); x1 = (1, 1) + 0.5 * m1 = (2, 0.5)
    avgm.step(model, new double[] {2, -1}, state);
    assertThat(state.firstMoment).containsExactly(2f, -1f);
    assertThat(model).containsExactly(2f, 0.5f);

    // m2 = 0.5 * (2, -1) + (1, 1) = (2, 0.5); x2 = (2, 0.5) + (1, 0.25) = (3, 0.75)
    avgm.step(model, new double[] {1, 1}, state);
    assertThat(state.firstMoment).containsExactly(2f, 0.5f);
    assertThat(model).containsExactly(3f, 0.75f);

    // m3 = 0.5 * (2, 0.5) + 0 = (1, 0.25): the model keeps moving on a zero delta
    // x3 = (3, 0.75) + (0.5, 0.125) = (3.5, 0.875)
    avgm.step(model, new double[] {0, 0}, state);
    assertThat(state.firstMoment).containsExactly(1f, 0.25f);
    assertThat(model).containsExactly(3.5f, 0.875f);
    assertThat(state.secondMoment).isEmpty();
    assertThat(state.steps).isEqualTo(3);
  }

  @Test
  void avgm_withMomentumZero_isBitIdenticalToSgd() {
    SplittableRandom random = new SplittableRandom(11);
    ServerOptimizer sgd = ServerOptimizer.sgd(0.7);
    ServerOptimizer avgm = ServerOptimizer.avgm(0.7, 0);
    float[] a = new float[20];
    float[] b = new float[20];
    State sgdState = sgd.initialState(20);
    State avgmState = avgm.initialState(20);
    for (int round = 0; round < 10; round++) {
      double[] delta = random.doubles(20, -3, 3).toArray();
      sgd.step(a, delta, sgdState);
      avgm.step(b, delta, avgmState);
      assertThat(b).isEqualTo(a);
    }
  }

  @Test
  void adam_followsAlgorithm2_overThreeSteps() {
    float[] model = {1, -1};
    State state = ADAM.initialState(2);
    assertThat(state.firstMoment).containsExactly(0f, 0f);
    assertThat(state.secondMoment).containsExactly(0.25f, 0.25f);

    // Step 1, Delta = (2, -1):
    // m1 = 0.5 * 0 + 0.5 * (2, -1) = (1, -0.5)
    // v1 = 0.75 * 0.25 + 0.25 * (4, 1) = (1.1875, 0.4375)
    ADAM.step(model, DELTA_1, state);
    double x10 = 1 + 0.5 * 1 / (Math.sqrt(1.1875) + 0.5);
    double x11 = -1 + 0.5 * -0.5 / (Math.sqrt(0.4375) + 0.5);
    assertThat(state.firstMoment).containsExactly(1f, -0.5f);
    assertThat(state.secondMoment).containsExactly(1.1875f, 0.4375f);
    assertThat((double) model[0]).isCloseTo(x10, within(FLOAT_TOLERANCE));
    assertThat((double) model[1]).isCloseTo(x11, within(FLOAT_TOLERANCE));

    // Step 2, Delta = (0.5, 0.5):
    // m2 = 0.5 * (1, -0.5) + 0.5 * 0.5 = (0.75, 0)
    // v2 = 0.75 * (1.1875, 0.4375) + 0.25 * 0.25 = (0.953125, 0.390625): v shrinks geometrically
    ADAM.step(model, DELTA_2, state);
    double x20 = x10 + 0.5 * 0.75 / (Math.sqrt(0.953125) + 0.5);
    double x21 = x11; // m = 0
    assertThat(state.firstMoment).containsExactly(0.75f, 0f);
    assertThat(state.secondMoment).containsExactly(0.953125f, 0.390625f);
    assertThat((double) model[0]).isCloseTo(x20, within(FLOAT_TOLERANCE));
    assertThat((double) model[1]).isCloseTo(x21, within(FLOAT_TOLERANCE));

    // Step 3, Delta = (0, -2):
    // m3 = 0.5 * (0.75, 0) + 0.5 * (0, -2) = (0.375, -1)
    // v3 = 0.75 * (0.953125, 0.390625) + 0.25 * (0, 4) = (0.71484375, 1.29296875)
    ADAM.step(model, DELTA_3, state);
    double x30 = x20 + 0.5 * 0.375 / (Math.sqrt(0.71484375) + 0.5);
    double x31 = x21 + 0.5 * -1 / (Math.sqrt(1.29296875) + 0.5);
    assertThat(state.firstMoment).containsExactly(0.375f, -1f);
    assertThat(state.secondMoment).containsExactly(0.71484375f, 1.29296875f);
    assertThat((double) model[0]).isCloseTo(x30, within(FLOAT_TOLERANCE));
    assertThat((double) model[1]).isCloseTo(x31, within(FLOAT_TOLERANCE));
    assertThat(state.steps).isEqualTo(3);
  }

  @Test
  void yogi_followsAlgorithm2_andItsSignFlipSeparatesItFromAdam() {
    float[] model = {1, -1};
    State state = YOGI.initialState(2);
    assertThat(state.secondMoment).containsExactly(0.25f, 0.25f);

    // Step 1, Delta = (2, -1), Delta^2 = (4, 1) > v0 = 0.25, so sign(v - Delta^2) = -1:
    // v1 = 0.25 + 0.25 * (4, 1) = (1.25, 0.5)   (Adam: (1.1875, 0.4375))
    // m1 = (1, -0.5) as for Adam
    YOGI.step(model, DELTA_1, state);
    double x10 = 1 + 0.5 * 1 / (Math.sqrt(1.25) + 0.5);
    double x11 = -1 + 0.5 * -0.5 / (Math.sqrt(0.5) + 0.5);
    assertThat(state.firstMoment).containsExactly(1f, -0.5f);
    assertThat(state.secondMoment).containsExactly(1.25f, 0.5f);
    assertThat((double) model[0]).isCloseTo(x10, within(FLOAT_TOLERANCE));
    assertThat((double) model[1]).isCloseTo(x11, within(FLOAT_TOLERANCE));

    // Step 2, Delta = (0.5, 0.5), Delta^2 = 0.25 < v1, the sign flips to +1:
    // v2 = (1.25, 0.5) - 0.25 * 0.25 = (1.1875, 0.4375), an additive decrease
    // (Adam from the same v1 would give 0.75 * (1.25, 0.5) + 0.0625 = (1, 0.4375))
    // m2 = (0.75, 0)
    YOGI.step(model, DELTA_2, state);
    double x20 = x10 + 0.5 * 0.75 / (Math.sqrt(1.1875) + 0.5);
    double x21 = x11;
    assertThat(state.firstMoment).containsExactly(0.75f, 0f);
    assertThat(state.secondMoment).containsExactly(1.1875f, 0.4375f);
    assertThat((double) model[0]).isCloseTo(x20, within(FLOAT_TOLERANCE));
    assertThat((double) model[1]).isCloseTo(x21, within(FLOAT_TOLERANCE));

    // Step 3, Delta = (0, -2), Delta^2 = (0, 4):
    // coordinate 0: v2 > 0, v3 = 1.1875 - 0.25 * 0 = 1.1875 (a zero delta leaves Yogi's v alone)
    // coordinate 1: v2 = 0.4375 < 4, v3 = 0.4375 + 0.25 * 4 = 1.4375
    // m3 = (0.375, -1)
    YOGI.step(model, DELTA_3, state);
    double x30 = x20 + 0.5 * 0.375 / (Math.sqrt(1.1875) + 0.5);
    double x31 = x21 + 0.5 * -1 / (Math.sqrt(1.4375) + 0.5);
    assertThat(state.firstMoment).containsExactly(0.375f, -1f);
    assertThat(state.secondMoment).containsExactly(1.1875f, 1.4375f);
    assertThat((double) model[0]).isCloseTo(x30, within(FLOAT_TOLERANCE));
    assertThat((double) model[1]).isCloseTo(x31, within(FLOAT_TOLERANCE));
  }

  @Test
  void yogi_leavesVUnchanged_whenDeltaSquaredEqualsV() {
    // v0 = tau^2 = 0.25 and Delta = 0.5: sign(0) = 0, so v1 = 0.25
    State state = YOGI.initialState(1);
    YOGI.step(new float[] {0}, new double[] {0.5}, state);
    assertThat(state.secondMoment).containsExactly(0.25f);
  }

  @ParameterizedTest
  @ValueSource(doubles = {1, 1e3, 1e6, 1e9, 1e15})
  void adam_movesEachCoordinateByAboutEta_whateverTheDeltaScale(double scale) {
    // Without bias correction, m_t = (1-b1) sum_k b1^(t-k) d_k and v_t >= (1-b2) sum_k
    // b2^(t-k) d_k^2, so by Cauchy-Schwarz |m_t| / sqrt(v_t) <= (1-b1) / sqrt((1-b2)(1-b1^2/b2)),
    // about 2.345 for the defaults: a step is at most that many eta, independent of the scale.
    // A first step with |Delta| >> tau moves by 0.1 |Delta| / sqrt(0.01 Delta^2) = eta.
    double eta = 0.01;
    double b1 = ServerOptimizer.DEFAULT_BETA1;
    double b2 = ServerOptimizer.DEFAULT_BETA2;
    double bound = eta * (1 - b1) / Math.sqrt((1 - b2) * (1 - b1 * b1 / b2));
    ServerOptimizer adam = ServerOptimizer.adam(eta, b1, b2, ServerOptimizer.DEFAULT_TAU);
    int n = 16;
    float[] model = new float[n];
    State state = adam.initialState(n);
    SplittableRandom random = new SplittableRandom(2021);

    double[] first = new double[n];
    java.util.Arrays.fill(first, scale);
    adam.step(model, first, state);
    for (float x : model) {
      assertThat((double) x).isCloseTo(eta, within(0.02 * eta));
    }

    for (int round = 0; round < 300; round++) {
      float[] before = model.clone();
      double[] delta = new double[n];
      for (int i = 0; i < n; i++) {
        delta[i] = scale * random.nextGaussian() * (random.nextInt(10) == 0 ? 100 : 1);
      }
      adam.step(model, delta, state);
      for (int i = 0; i < n; i++) {
        // slack: float rounding of a model of magnitude <= 300 * bound
        assertThat(Math.abs((double) model[i] - before[i])).isLessThanOrEqualTo(bound + 1e-6);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void step_isDeterministic_bitForBit(Kind kind) {
    ServerOptimizer optimizer = new ServerOptimizer(kind, 0.1, 0.9, 0.99, 1e-3);
    float[] a = run(optimizer, 99);
    float[] b = run(optimizer, 99);
    assertThat(b).isEqualTo(a);
  }

  private static float[] run(ServerOptimizer optimizer, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    float[] model = new float[64];
    State state = optimizer.initialState(64);
    for (int round = 0; round < 30; round++) {
      optimizer.step(model, random.doubles(64, -1, 1).toArray(), state);
    }
    return model;
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void nanDelta_isRefused_andNothingChanges(Kind kind) {
    ServerOptimizer optimizer = new ServerOptimizer(kind, 0.1, 0.9, 0.99, 1e-3);
    float[] model = {1, 2, 3};
    State state = optimizer.initialState(3);
    optimizer.step(model, new double[] {0.1, 0.2, 0.3}, state);
    float[] modelBefore = model.clone();
    float[] mBefore = state.firstMoment.clone();
    float[] vBefore = state.secondMoment.clone();

    assertThatThrownBy(() -> optimizer.step(model, new double[] {0.5, 0.5, Double.NaN}, state))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("averageDelta must be finite, was NaN at index 2");

    assertThat(model).isEqualTo(modelBefore);
    assertThat(state.firstMoment).isEqualTo(mBefore);
    assertThat(state.secondMoment).isEqualTo(vBefore);
    assertThat(state.steps).isEqualTo(1);
  }

  @Test
  void infiniteDelta_isRefused() {
    ServerOptimizer sgd = ServerOptimizer.sgd(1);
    assertThatThrownBy(
            () ->
                sgd.step(
                    new float[] {0}, new double[] {Double.NEGATIVE_INFINITY}, sgd.initialState(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("averageDelta must be finite, was -Infinity at index 0");
  }

  @Test
  void deltaThatWouldOverflowTheFloatState_isRefused_andNothingChanges() {
    // (1 - b2) Delta^2 = 1e40 exceeds Float.MAX_VALUE (3.4e38), so v could not be stored.
    ServerOptimizer adam = ServerOptimizer.adam(0.1, 0.9, 0.99, 1e-3);
    float[] model = {1, 2};
    State state = adam.initialState(2);

    assertThatThrownBy(() -> adam.step(model, new double[] {1, 1e21}, state))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("step would leave the model or a moment non-finite at index 1");

    assertThat(model).containsExactly(1f, 2f);
    assertThat(state.firstMoment).containsExactly(0f, 0f);
    assertThat(state.steps).isZero();
  }

  @Test
  void mismatchedDeltaLength_isRefused() {
    ServerOptimizer sgd = ServerOptimizer.sgd(1);
    assertThatThrownBy(() -> sgd.step(new float[3], new double[2], sgd.initialState(3)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("averageDelta must have the model's length 3, was 2");
  }

  @Test
  void stateOfTheWrongShape_isRefused() {
    ServerOptimizer adam = ServerOptimizer.adam(0.1, 0.9, 0.99, 1e-3);
    assertThatThrownBy(() -> adam.step(new float[3], new double[3], adam.initialState(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("state.firstMoment must have length 3 for this optimizer and model, was 2");
    State sgdState = ServerOptimizer.sgd(0.1).initialState(3);
    assertThatThrownBy(() -> adam.step(new float[3], new double[3], sgdState))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("state.firstMoment must have length 3 for this optimizer and model, was 0");
  }

  @Test
  void initialState_hasTheShapeOfTheKind() {
    assertThat(ServerOptimizer.sgd(1).initialState(4).firstMoment).isEmpty();
    State avgm = ServerOptimizer.avgm(1, 0.9).initialState(4);
    assertThat(avgm.firstMoment).containsExactly(0f, 0f, 0f, 0f);
    assertThat(avgm.secondMoment).isEmpty();
    State yogi = ServerOptimizer.yogi(1, 0.9, 0.99, 0.01).initialState(2);
    assertThat(yogi.secondMoment).containsExactly((float) 1e-4, (float) 1e-4);
    assertThat(yogi.steps).isZero();
    assertThatThrownBy(() -> ServerOptimizer.sgd(1).initialState(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dimension must be >= 0, was -1");
  }

  @Test
  void stateful_isTrueForEveryKindButSgd() {
    assertThat(ServerOptimizer.sgd(1).stateful()).isFalse();
    assertThat(ServerOptimizer.avgm(1, 0.9).stateful()).isTrue();
    assertThat(ServerOptimizer.adam(1, 0.9, 0.99, 1e-3).stateful()).isTrue();
    assertThat(ServerOptimizer.yogi(1, 0.9, 0.99, 1e-3).stateful()).isTrue();
  }

  @Test
  void factories_fillTheRecord() {
    assertThat(ServerOptimizer.avgm(0.5, 0.8))
        .isEqualTo(new ServerOptimizer(Kind.AVGM, 0.5, 0.8, 0, ServerOptimizer.DEFAULT_TAU));
    assertThat(ServerOptimizer.yogi(0.5, 0.8, 0.9, 0.1))
        .isEqualTo(new ServerOptimizer(Kind.YOGI, 0.5, 0.8, 0.9, 0.1));
    assertThat(ServerOptimizer.DEFAULT_BETA1).isEqualTo(0.9);
    assertThat(ServerOptimizer.DEFAULT_BETA2).isEqualTo(0.99);
    assertThat(ServerOptimizer.DEFAULT_TAU).isEqualTo(1e-3);
    assertThat(ServerOptimizer.DEFAULT_MOMENTUM).isEqualTo(0.9);
  }

  @Test
  void kind_parsesSpecNames_andRefusesOthersListingTheAllowed() {
    for (Kind kind : List.of(Kind.SGD, Kind.AVGM, Kind.ADAM, Kind.YOGI)) {
      assertThat(Kind.parse(kind.specName())).isEqualTo(kind);
    }
    // A statistics job's step is not a training optimizer a spec or flag may name.
    assertThatThrownBy(() -> Kind.parse("release"))
        .hasMessage("server optimizer must be one of [sgd, avgm, adam, yogi], was release");
    assertThat(Kind.YOGI.specName()).isEqualTo("yogi");
    assertThat(Kind.parse("Adam")).isEqualTo(Kind.ADAM);
    assertThatThrownBy(() -> Kind.parse("adagrad"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("server optimizer must be one of [sgd, avgm, adam, yogi], was adagrad");
    assertThatThrownBy(() -> Kind.parse(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("server optimizer must be one of [sgd, avgm, adam, yogi], was null");
  }

  @Test
  void parameters_areValidated_withMessagesNamingParameterRuleAndValue() {
    assertThatThrownBy(() -> ServerOptimizer.sgd(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("learningRate must be > 0 and finite, was NaN");
    assertThatThrownBy(() -> ServerOptimizer.sgd(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("learningRate must be > 0 and finite, was 0.0");
    assertThatThrownBy(() -> ServerOptimizer.sgd(Double.POSITIVE_INFINITY))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("learningRate must be > 0 and finite, was Infinity");
    assertThatThrownBy(() -> ServerOptimizer.avgm(1, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("beta1 must be in [0, 1), was 1.0");
    assertThatThrownBy(() -> ServerOptimizer.avgm(1, -0.1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("beta1 must be in [0, 1), was -0.1");
    assertThatThrownBy(() -> ServerOptimizer.adam(1, 0.9, Double.NaN, 1e-3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("beta2 must be in [0, 1), was NaN");
    assertThatThrownBy(() -> ServerOptimizer.yogi(1, 0.9, 0.99, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tau must be > 0 and finite, was 0.0");
    assertThatThrownBy(() -> ServerOptimizer.yogi(1, 0.9, 0.99, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tau must be > 0 and finite, was NaN");
    assertThatThrownBy(() -> new ServerOptimizer(null, 1, 0, 0, 1))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("kind");
  }

  @Test
  void optimizerAndState_surviveJavaSerialization() throws Exception {
    ServerOptimizer adam = ServerOptimizer.adam(0.1, 0.9, 0.99, 1e-3);
    State state = adam.initialState(2);
    adam.step(new float[2], new double[] {1, -1}, state);

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(adam);
      out.writeObject(state);
    }
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      assertThat(in.readObject()).isEqualTo(adam);
      State copy = (State) in.readObject();
      assertThat(copy.firstMoment).isEqualTo(state.firstMoment);
      assertThat(copy.secondMoment).isEqualTo(state.secondMoment);
      assertThat(copy.steps).isEqualTo(1);
    }
  }
}
