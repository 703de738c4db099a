package dev.privagg.client.train;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ModelGradientTest {

  /** Central differences with step 1e-5 have error O(h^2); relative tolerance 1e-5. */
  @ParameterizedTest
  @ValueSource(strings = {"softmax", "mlp"})
  void gradient_matchesFiniteDifferences(String name) {
    SplittableRandom random = new SplittableRandom(4);
    Model model = Model.named(name, 5, 3, 4);
    double[][] params = model.zeros();
    for (double[] t : params) {
      for (int i = 0; i < t.length; i++) {
        t[i] = random.nextGaussian() * 0.5;
      }
    }
    double[] x = {0.3, -1.2, 0.0, 2.0, 0.7};
    int label = 2;
    double[][] grad = model.zeros();
    model.lossAndGradient(params, x, label, grad);
    double h = 1e-5;
    for (int t = 0; t < params.length; t++) {
      for (int i = 0; i < params[t].length; i++) {
        double saved = params[t][i];
        params[t][i] = saved + h;
        double up = model.lossAndGradient(params, x, label, null);
        params[t][i] = saved - h;
        double down = model.lossAndGradient(params, x, label, null);
        params[t][i] = saved;
        double numeric = (up - down) / (2 * h);
        assertThat(grad[t][i])
            .as("%s tensor %d index %d", name, t, i)
            .isCloseTo(
                numeric,
                org.assertj.core.api.Assertions.within(1e-5 * Math.max(1, Math.abs(numeric))));
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"softmax", "mlp"})
  void loss_isStable_forHugeLogits(String name) {
    Model model = Model.named(name, 2, 3, 2);
    double[][] params = model.zeros();
    for (double[] t : params) {
      java.util.Arrays.fill(t, 1e3);
    }
    double loss = model.lossAndGradient(params, new double[] {1e3, 1e3}, 0, model.zeros());
    assertThat(loss).isFinite().isGreaterThanOrEqualTo(0);
  }
}
