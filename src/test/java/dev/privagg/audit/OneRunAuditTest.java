package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

import dev.privagg.privacy.GaussianCalibration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.commons.numbers.gamma.LogGamma;
import org.apache.commons.statistics.distribution.NormalDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class OneRunAuditTest {
  private static final int N = 10_000;
  private static final double SIGNIFICANCE = 0.05;
  private static final double DELTA = 1e-6;

  /** jax_privacy tests/auditing_test.py _deterministic_normal: normal quantiles at (i + 1/2)/n. */
  private static double[] deterministicNormal(double mu, double sigma, int n) {
    NormalDistribution normal = NormalDistribution.of(0, 1);
    double[] scores = new double[n];
    for (int i = 0; i < n; i++) {
      double p = i * (1.0 / n) + 1.0 / (2 * n);
      scores[i] = normal.inverseCumulativeProbability(p) * sigma + mu;
    }
    return scores;
  }

  private static OneRunAudit shifted(double shift) {
    return new OneRunAudit(deterministicNormal(shift, 1, N), deterministicNormal(0, 1, N));
  }

  // Published: jax_privacy tests/auditing_test.py test_epsilon_one_run_close (10,000 + 10,000
  // deterministic normal scores, significance 0.05, delta 1e-6), rtol 1e-5 as there. Second
  // value: the reference run locally (see below); Brent stops at xtol 1e-6 on both sides, so they
  // are compared to 2e-6 (they agree to 1e-13 on this machine).
  @ParameterizedTest
  @CsvSource({
    "0, 0, 0",
    "1, 1.13346, 1.1334595177700586",
    "2, 2.311945, 2.3119452296146563",
    "4, 4.395568, 4.395567698033991"
  })
  void epsilonOneRun_reproducesJaxPrivacy(double shift, double published, double computed) {
    double eps = shifted(shift).epsilonOneRun(SIGNIFICANCE, DELTA);
    assertThat(eps).isCloseTo(published, within(1e-5 * published));
    assertThat(eps).isCloseTo(computed, within(2e-6));
  }

  // Published: same test, the f-DP variant (Mahloujifar et al.), rtol 1e-5; second value as above.
  @ParameterizedTest
  @CsvSource({
    "0, 0, 0",
    "1, 2.164749, 2.164749246983307",
    "2, 4.7218075, 4.721806448645861",
    "4, 9.133752, 9.133751869736436"
  })
  void epsilonOneRunFdp_reproducesJaxPrivacy(double shift, double published, double computed) {
    double eps = shifted(shift).epsilonOneRunFdp(SIGNIFICANCE, DELTA);
    assertThat(eps).isCloseTo(published, within(1e-5 * published));
    assertThat(eps).isCloseTo(computed, within(2e-6));
  }

  // Computed (not published) by running jax_privacy auditing.py (commit 8967688) locally with
  // numpy 2.4.6, scipy 1.17.1 and dp_accounting's gaussian_mechanism.py: Explicit(threshold),
  // which has no Bonferroni correction. Tolerance: both sides stop Brent at xtol 1e-6.
  @ParameterizedTest
  @CsvSource({
    "1, 0.5, 0.7712927774973948, 1.3334628867287357",
    "1, 2.0, 1.8218863653054869, 2.748243045493217",
    "2, 0.5, 1.072535595435779, 1.9246626687314308",
    "2, 2.0, 2.9749858713087307, 4.95381158680818",
    "4, 0.5, 1.141761658277692, 2.0678020966156567",
    "4, 2.0, 3.646352223866467, 6.509365700804572"
  })
  void explicitThreshold_matchesTheReferenceRunLocally(
      double shift, double threshold, double expected, double expectedFdp) {
    OneRunAudit audit = shifted(shift);
    assertThat(audit.epsilonOneRun(SIGNIFICANCE, DELTA, threshold))
        .isCloseTo(expected, within(2e-6));
    assertThat(audit.epsilonOneRunFdp(SIGNIFICANCE, DELTA, threshold))
        .isCloseTo(expectedFdp, within(2e-6));
  }

  // Computed by running the reference locally as above: the thresholds its search settles on.
  @ParameterizedTest
  @CsvSource({
    "1, 386, 1.580911650291843, 2.776199746767374",
    "2, 374, 2.1260403304996465, 3.320404505910443",
    "4, 140, 3.0760262826551314, 3.890618617811632"
  })
  void search_picksTheReferencesThresholds(
      double shift, int frontierSize, double threshold, double thresholdFdp) {
    OneRunAudit audit = shifted(shift);
    assertThat(audit.thresholds()).hasSize(frontierSize);
    assertThat(audit.oneRun(SIGNIFICANCE, DELTA).threshold()).isCloseTo(threshold, within(1e-12));
    assertThat(audit.oneRunFdp(SIGNIFICANCE, DELTA).threshold())
        .isCloseTo(thresholdFdp, within(1e-12));
  }

  @Test
  void bonferroniSearch_isTheExplicitBoundAtItsThreshold_withTheCorrectedSignificance() {
    OneRunAudit audit = shifted(2);
    double corrected = SIGNIFICANCE / audit.thresholds().length;
    OneRunAudit.Bound bound = audit.oneRun(SIGNIFICANCE, DELTA);
    assertThat(audit.epsilonOneRun(corrected, DELTA, bound.threshold()))
        .isCloseTo(bound.epsilon(), within(2e-6));
    OneRunAudit.Bound fdp = audit.oneRunFdp(SIGNIFICANCE, DELTA);
    assertThat(audit.epsilonOneRunFdp(corrected, DELTA, fdp.threshold()))
        .isCloseTo(fdp.epsilon(), within(2e-6));
  }

  // A lower bound must stay below the truth. In scores from N(mu, 1) against N(0, 1) the best test
  // is a Gaussian mechanism with noise multiplier 1/mu, whose exact epsilon is Balle and Wang's
  // (jax_privacy's tight tests compare with dp_accounting.get_epsilon_gaussian(1 / mu, delta) the
  // same way). The f-DP audit uses the whole trade-off curve, so it is the tighter of the two.
  @ParameterizedTest
  @ValueSource(doubles = {0.5, 1, 2, 4})
  void bounds_stayBelowTheTrueGaussianEpsilon_andFdpIsTighter(double mu) {
    OneRunAudit audit = shifted(mu);
    double truth = GaussianCalibration.gaussianEpsilon(1 / mu, DELTA);
    double steinke = audit.epsilonOneRun(SIGNIFICANCE, DELTA);
    double fdp = audit.epsilonOneRunFdp(SIGNIFICANCE, DELTA);
    assertThat(steinke).isPositive().isLessThan(truth);
    assertThat(fdp).isGreaterThan(steinke).isLessThan(truth);
  }

  static Stream<Arguments> pValueGrid() {
    List<Arguments> cases = new ArrayList<>();
    for (int m : new int[] {10, 100, 1000}) {
      for (int nGuess : new int[] {1, 10, 100}) {
        for (int nWrong : new int[] {0, 1, 10, 100}) {
          if (!(nWrong <= nGuess && nGuess <= m)) {
            continue;
          }
          for (double eps : new double[] {0, 0.5, 1.0}) {
            for (double delta : new double[] {0, 1e-6, 1e-3, 1e-1, 1}) {
              cases.add(Arguments.of(m, nGuess, nGuess - nWrong, eps, delta));
            }
          }
        }
      }
    }
    return cases.stream();
  }

  // jax_privacy tests/auditing_test.py test_one_run_p_value: the vectorized p-value against the
  // naive loop (assertAlmostEqual, 7 places). The naive version here takes its binomial masses from
  // log-gamma, not from the distribution class the code uses.
  @ParameterizedTest
  @MethodSource("pValueGrid")
  void pValue_matchesNaiveLoop(int m, int nGuess, int nCorrect, double eps, double delta) {
    assertThat(OneRunAudit.pValue(m, nGuess, nCorrect, eps, delta))
        .isCloseTo(naivePValue(m, nGuess, nCorrect, eps, delta), within(1e-12));
  }

  private static double naivePValue(int m, int nGuess, int nCorrect, double eps, double delta) {
    double q = Math.exp(eps) / (1 + Math.exp(eps));
    double[] pmf = new double[nGuess + 1];
    for (int k = 0; k <= nGuess; k++) {
      pmf[k] =
          Math.exp(
              LogGamma.value(nGuess + 1.0)
                  - LogGamma.value(k + 1.0)
                  - LogGamma.value(nGuess - k + 1.0)
                  + k * Math.log(q)
                  + (nGuess - k) * Math.log1p(-q));
    }
    double beta = 0;
    for (int k = nCorrect; k <= nGuess; k++) {
      beta += pmf[k];
    }
    double alpha = 0;
    double alphaSum = 0;
    for (int i = 1; i <= nCorrect; i++) {
      alphaSum += pmf[nCorrect - i];
      if (alphaSum > i * alpha) {
        alpha = alphaSum / i;
      }
    }
    return Math.min(beta + alpha * delta * 2 * m, 1);
  }

  // jax_privacy tests/auditing_test.py test_pareto_frontier_*: the same points and frontiers.
  @Test
  void paretoFrontier_referenceCases() {
    assertThat(frontier(new double[][] {{0, 0}, {1, 1}})).containsExactly(0, 1);
    assertThat(frontier(new double[][] {{0, 0}, {0, 2}, {3, 2}, {3, 5}, {5, 5}}))
        .containsExactly(0, 1, 3, 4);
    // [3, 3] is dominated by [0, 2] and [3, 5].
    assertThat(frontier(new double[][] {{0, 0}, {0, 2}, {2, 2}, {2, 3}, {3, 3}, {3, 5}, {5, 5}}))
        .containsExactly(0, 1, 5, 6);
    // [1, 4] is not dominated by [0, 2] and [3, 5].
    assertThat(frontier(new double[][] {{0, 0}, {0, 2}, {1, 2}, {1, 4}, {3, 4}, {3, 5}, {5, 5}}))
        .containsExactly(0, 1, 3, 5, 6);
    // [1, 3] is a combination of [0, 2] and [2, 4].
    assertThat(frontier(new double[][] {{0, 0}, {0, 2}, {1, 2}, {1, 3}, {2, 3}, {2, 4}, {4, 4}}))
        .containsExactly(0, 1, 5, 6);
  }

  @Test
  void paretoFrontier_ofALine_isItsEnds() {
    double[] xs = IntStream.range(0, 100).asDoubleStream().toArray();
    assertThat(OneRunAudit.paretoFrontier(xs, xs.clone())).containsExactly(0, 99);
  }

  // Reference names: the frontier of sin on [0, pi/2], cos on [0, pi/2] and sin on [0, pi] keeps
  // every point; of -cos, -sin on [0, pi/2] and -sin on [0, pi] only the ends.
  @ParameterizedTest
  @CsvSource({
    "sin, 0.5, true", "cos, 0.5, true", "sin, 1, true",
    "-cos, 0.5, false", "-sin, 0.5, false", "-sin, 1, false"
  })
  void paretoFrontier_ofCurves(String fn, double piFraction, boolean keepsAll) {
    int n = 100;
    double[] xs = new double[n];
    double[] ys = new double[n];
    for (int i = 0; i < n; i++) {
      xs[i] = piFraction * Math.PI * i / (n - 1);
      ys[i] =
          switch (fn) {
            case "sin" -> Math.sin(xs[i]);
            case "cos" -> Math.cos(xs[i]);
            case "-cos" -> -Math.cos(xs[i]);
            default -> -Math.sin(xs[i]);
          };
    }
    int[] expected = keepsAll ? IntStream.range(0, n).toArray() : new int[] {0, n - 1};
    assertThat(OneRunAudit.paretoFrontier(xs, ys)).containsExactly(expected);
  }

  // jax_privacy test_pareto_frontier_random: noisy sin against the cubic definition (no j < i < k
  // with i on or below the chord from j to k), with Java seeds instead of numpy's.
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
  void paretoFrontier_matchesTheCubicDefinition(int seed) {
    int n = 80;
    SplittableRandom random = new SplittableRandom(0xBAD5EEDL + seed);
    double[] xs = new double[n];
    double[] ys = new double[n];
    for (int i = 0; i < n; i++) {
      xs[i] = Math.PI * i / (n - 1);
      ys[i] = Math.sin(xs[i]) + 0.1 * gaussian(random);
    }
    List<Integer> expected = new ArrayList<>();
    for (int j = 0; j < n; j++) {
      boolean dominated = false;
      for (int i = 0; i < j && !dominated; i++) {
        for (int k = j + 1; k < n && !dominated; k++) {
          double area = (xs[j] - xs[i]) * (ys[k] - ys[i]) - (ys[j] - ys[i]) * (xs[k] - xs[i]);
          dominated = area >= 0;
        }
      }
      if (!dominated) {
        expected.add(j);
      }
    }
    assertThat(OneRunAudit.paretoFrontier(xs, ys))
        .containsExactly(expected.stream().mapToInt(Integer::intValue).toArray());
  }

  @Test
  void paretoFrontier_refusesTooFewOrUnsortedPoints() {
    assertThatThrownBy(() -> OneRunAudit.paretoFrontier(new double[] {1}, new double[] {1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least two points");
    assertThatThrownBy(() -> OneRunAudit.paretoFrontier(new double[] {1, 0}, new double[] {0, 1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sorted by x");
  }

  // jax_privacy tests/auditing_test.py test_get_tn_fn_counts*: thresholds, true and false negative
  // counts on the frontier (a score at the threshold is guessed "in").
  @Test
  void counts_simple() {
    OneRunAudit audit =
        new OneRunAudit(new double[] {1.5, 2.5, 0.5, 3.5}, new double[] {0, 3, 2, 1});
    assertThat(audit.thresholds()).containsExactly(0, 0.5, 3.5, Double.POSITIVE_INFINITY);
    assertThat(audit.trueNegatives()).containsExactly(0, 1, 4, 4);
    assertThat(audit.falseNegatives()).containsExactly(0, 0, 3, 4);
  }

  @Test
  void counts_tiesConvex() {
    OneRunAudit audit = new OneRunAudit(new double[] {0, 1, 1, 2}, new double[] {0, 0, 1, 1});
    assertThat(audit.thresholds()).containsExactly(0, 1, 2, Double.POSITIVE_INFINITY);
    assertThat(audit.trueNegatives()).containsExactly(0, 2, 4, 4);
    assertThat(audit.falseNegatives()).containsExactly(0, 1, 3, 4);
  }

  @Test
  void counts_tiesNonconvex() {
    OneRunAudit audit = new OneRunAudit(new double[] {0, 0, 1, 2}, new double[] {0, 1, 1, 1});
    assertThat(audit.thresholds()).containsExactly(0, 2, Double.POSITIVE_INFINITY);
    assertThat(audit.trueNegatives()).containsExactly(0, 4, 4);
    assertThat(audit.falseNegatives()).containsExactly(0, 3, 4);
  }

  @Test
  void counts_allZeros_andBothZerosAreOneThreshold() {
    OneRunAudit audit = new OneRunAudit(new double[] {0, 0, -0.0, 0}, new double[] {0, -0.0, 0, 0});
    assertThat(audit.thresholds()).containsExactly(0, Double.POSITIVE_INFINITY);
    assertThat(audit.trueNegatives()).containsExactly(0, 4);
    assertThat(audit.falseNegatives()).containsExactly(0, 4);
  }

  @Test
  void noSeparation_givesZero_atTheThresholdOfNoGuess() {
    OneRunAudit audit = new OneRunAudit(new double[] {1, 2, 3}, new double[] {0, 1, 2});
    assertThat(audit.oneRun(0.1, 0.1))
        .isEqualTo(new OneRunAudit.Bound(0, Double.POSITIVE_INFINITY));
    assertThat(audit.epsilonOneRun(0.1, 0.1, 10)).isZero();
  }

  @Test
  void gaussianDpSigma_isTheAnalyticCalibration_andClosedFormAtEpsilonZero() {
    // dp_accounting get_sigma_gaussian(1, 1e-5) = 3.7306 (Balle and Wang 2018).
    assertThat(OneRunAudit.gaussianDpSigma(1, 1e-5)).isCloseTo(3.7306, withinPercentage(0.01));
    // At eps 0 delta = 2 Phi(1/(2 sigma)) - 1, the continuous limit of the calibration.
    double sigma0 = OneRunAudit.gaussianDpSigma(0, 1e-3);
    assertThat(2 * NormalDistribution.of(0, 1).cumulativeProbability(1 / (2 * sigma0)) - 1)
        .isCloseTo(1e-3, withinPercentage(1e-8));
    assertThat(OneRunAudit.gaussianDpSigma(1e-9, 1e-3)).isCloseTo(sigma0, withinPercentage(1e-4));
    assertThat(OneRunAudit.gaussianDpSigma(1, 1)).isZero();
  }

  // jax_privacy tests/auditing_test.py test_epsilon_one_run_raises_invalid_args and
  // test_auditor_raises_empty_scores (one_sided has no counterpart: only one-sided is offered).
  @Test
  void invalidArguments_areRefusedByName() {
    OneRunAudit audit = new OneRunAudit(new double[] {1, 2, 3}, new double[] {0, 1, 2});
    assertThatThrownBy(() -> audit.epsilonOneRun(0.0, 0.1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("significance must be in (0, 1), was 0.0");
    assertThatThrownBy(() -> audit.epsilonOneRunFdp(1.1, 0.1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("significance must be in (0, 1), was 1.1");
    assertThatThrownBy(() -> audit.epsilonOneRun(0.1, -0.1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delta must be in (0, 1], was -0.1");
    assertThatThrownBy(() -> audit.epsilonOneRunFdp(0.1, 1.1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delta must be in (0, 1], was 1.1");
    assertThatThrownBy(() -> audit.epsilonOneRun(0.1, 0.1, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threshold must not be NaN");
    assertThatThrownBy(() -> new OneRunAudit(new double[0], new double[] {1, 2, 3}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("inScores must be non-empty");
    assertThatThrownBy(() -> new OneRunAudit(new double[] {1, 2, 3}, new double[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("outScores must be non-empty");
    assertThatThrownBy(() -> new OneRunAudit(new double[] {1, Double.NaN}, new double[] {1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("inScores must be finite, inScores[1] was NaN");
  }

  /** A standard normal by Box-Muller, enough for the frontier's noisy curves. */
  private static double gaussian(SplittableRandom random) {
    return Math.sqrt(-2 * Math.log1p(-random.nextDouble()))
        * Math.cos(2 * Math.PI * random.nextDouble());
  }

  private static int[] frontier(double[][] points) {
    double[] xs = new double[points.length];
    double[] ys = new double[points.length];
    for (int i = 0; i < points.length; i++) {
      xs[i] = points[i][0];
      ys[i] = points[i][1];
    }
    return OneRunAudit.paretoFrontier(xs, ys);
  }

  /**
   * The verdict's bound divides the significance by every possible guess set, m + 1, fixed before
   * the scores: never above the reference's frontier-corrected bound, and exactly the search at
   * significance / (m + 1).
   */
  @Test
  void fixedUnionFdpBound_isTheSearchAtSignificanceOverMPlusOne_andNoLargerThanTheReferences() {
    OneRunAudit audit =
        new OneRunAudit(deterministicNormal(2, 1, 500), deterministicNormal(0, 1, 500));
    OneRunAudit.Bound fixed = audit.oneRunFdpFixedUnion(0.05, 1e-6);
    assertThat(fixed.epsilon())
        .isPositive()
        .isLessThanOrEqualTo(audit.epsilonOneRunFdp(0.05, 1e-6));
    int frontier = audit.thresholds().length;
    assertThat(fixed.epsilon())
        .isCloseTo(audit.oneRunFdp(0.05 / 1001 * frontier, 1e-6).epsilon(), within(1e-9));
  }
}
