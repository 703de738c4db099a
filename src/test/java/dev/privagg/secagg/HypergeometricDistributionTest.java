package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HypergeometricDistributionTest {
  /** FCP's tolerance; the values here agree to about 1e-14. */
  private static final double RELATIVE_ERROR = 1e-9;

  // fcp/secagg/server/distribution_utilities_test.cc, HypergeometricDistributionCreate
  @ParameterizedTest(name = "total {0}, marked {1}, sampled {2}")
  @CsvSource({"10, 11, 5", "10, 5, 11", "10, -1, 5", "10, 5, -1", "-10, 5, 5", "-10, -5, -5"})
  void constructor_rejectsFcpsInvalidPopulations(int total, int marked, int sampled) {
    assertThatThrownBy(() -> new HypergeometricDistribution(total, marked, sampled))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void constructor_namesTheBoundThatWasBroken() {
    assertThatThrownBy(() -> new HypergeometricDistribution(10, 11, 5))
        .hasMessage("marked must be in [0, total = 10], was 11");
    assertThatThrownBy(() -> new HypergeometricDistribution(10, 5, 11))
        .hasMessage("sampled must be in [0, total = 10], was 11");
    assertThatThrownBy(() -> new HypergeometricDistribution(-10, 5, 5))
        .hasMessage("total must be >= 0, was -10");
  }

  // fcp/secagg/server/distribution_utilities_test.cc, HypergeometricPMFTests
  @ParameterizedTest(name = "P[X = {0}] for total {1}, marked {2}, sampled {3}")
  @CsvSource({
    "-5, 9, 3, 3, 0.0",
    "17, 9, 3, 3, 0.0",
    "0, 10, 0, 5, 1.0",
    "3, 10, 10, 5, 0.0",
    "4, 15, 6, 12, 0.2967032967032967",
    "38, 98, 63, 17, 0.0",
    "2, 187, 105, 43, 5.423847289689941e-16",
    "40, 980, 392, 103, 0.08225792329713294",
    "89, 1489, 312, 370, 0.014089199026838601",
    "100000, 1000000, 200000, 500000, 0.0019947087839501726"
  })
  void pmf_reproducesFcpValues(int x, int total, int marked, int sampled, double expected) {
    double pmf = new HypergeometricDistribution(total, marked, sampled).pmf(x);
    assertThat(pmf).isCloseTo(expected, within(RELATIVE_ERROR * (expected + 1e-30)));
  }

  // fcp/secagg/server/distribution_utilities_test.cc, HypergeometricCDFTests
  @ParameterizedTest(name = "P[X <= {0}] for total {1}, marked {2}, sampled {3}")
  @CsvSource({
    "-5, 9, 3, 3, 0.0",
    "17, 9, 3, 3, 1.0",
    "0, 10, 0, 5, 1.0",
    "3, 10, 10, 5, 0.0",
    "4.5, 15, 6, 12, 0.34065934065934067",
    "38, 98, 63, 17, 1.0",
    "2, 187, 105, 43, 5.526570670097338e-16",
    "40, 980, 392, 103, 0.4430562850817352",
    "89, 1489, 312, 370, 0.9599670222722507",
    "100000, 1000000, 200000, 500000, 0.5009973543919738"
  })
  void cdf_reproducesFcpValues(double x, int total, int marked, int sampled, double expected) {
    double cdf = new HypergeometricDistribution(total, marked, sampled).cdf(x);
    assertThat(cdf).isCloseTo(expected, within(RELATIVE_ERROR * (expected + 1e-30)));
  }

  // fcp/secagg/server/distribution_utilities_test.cc, HypergeometricQuantileTests: FCP allows
  // lower in [lower, lower + 1] and upper in [upper - 1, upper].
  @ParameterizedTest(name = "probability {0} for total {1}, marked {2}, sampled {3}")
  @CsvSource({
    "0.5, 10, 0, 5, -1, 0",
    "0.2, 10, 10, 5, 4, 5",
    "0.97, 15, 6, 12, 5, 3",
    "0.0001, 98, 63, 17, 3, 17",
    "1e-05, 187, 105, 43, 11, 36",
    "3e-08, 980, 392, 103, 16, 67",
    "1.1e-09, 1489, 312, 370, 38, 119",
    "1e-18, 1000000, 200000, 500000, 98248, 101751"
  })
  void quantiles_reproduceFcpValues(
      double probability, int total, int marked, int sampled, int lower, int upper) {
    var distribution = new HypergeometricDistribution(total, marked, sampled);
    assertThat(distribution.quantile(probability)).isBetween(lower, lower + 1);
    assertThat(distribution.complementQuantile(probability)).isBetween(upper - 1, upper);
  }

  @ParameterizedTest(name = "total {0}, marked {1}, sampled {2}")
  @CsvSource({"20, 7, 9", "60, 30, 17", "200, 13, 150", "200, 190, 100", "1, 1, 1", "0, 0, 0"})
  void pmf_matchesExactRationalArithmetic_overTheWholeSupport(int total, int marked, int sampled) {
    var distribution = new HypergeometricDistribution(total, marked, sampled);
    for (int x = -1; x <= sampled + 1; x++) {
      double exact = exactPmf(total, marked, sampled, x);
      assertThat(distribution.pmf(x)).as("x = %d", x).isCloseTo(exact, within(1e-13 * exact));
    }
  }

  @Test
  void cdf_sumsThePmf_fromEitherTail() {
    var distribution = new HypergeometricDistribution(200, 13, 150);
    double sum = 0;
    for (int x = 0; x <= 13; x++) {
      sum += exactPmf(200, 13, 150, x);
      assertThat(distribution.cdf(x)).as("x = %d", x).isCloseTo(sum, within(1e-13));
    }
  }

  @Test
  void quantiles_bracketTheirTailProbabilities() {
    var distribution = new HypergeometricDistribution(1000, 300, 100);
    double probability = 1e-6;
    int lower = distribution.quantile(probability);
    assertThat(distribution.cdf(lower)).isLessThan(probability);
    assertThat(distribution.cdf(lower + 1)).isGreaterThanOrEqualTo(probability);
    int upper = distribution.complementQuantile(probability);
    assertThat(upperTail(upper)).isLessThan(probability);
    assertThat(upperTail(upper - 1)).isGreaterThanOrEqualTo(probability);
  }

  @Test
  void logPmf_staysFinite_whereThePmfUnderflows() {
    // P[all 50 000 drawn are marked] = C(500 000, 50 000) / C(1 000 000, 50 000), about e^-35 974.
    var distribution = new HypergeometricDistribution(1_000_000, 500_000, 50_000);
    assertThat(distribution.pmf(50_000)).isZero();
    double expected = 0;
    for (int i = 0; i < 50_000; i++) {
      expected += Math.log((500_000.0 - i) / (1_000_000.0 - i));
    }
    assertThat(distribution.logPmf(50_000)).isCloseTo(expected, within(1e-9 * -expected));
    assertThat(distribution.logPmf(50_001)).isEqualTo(Double.NEGATIVE_INFINITY);
  }

  @Test
  void quantiles_rejectProbabilitiesOutsideTheOpenUnitInterval() {
    var distribution = new HypergeometricDistribution(10, 5, 5);
    assertThatThrownBy(() -> distribution.quantile(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("probability must be in (0, 1), was 0.0");
    assertThatThrownBy(() -> distribution.complementQuantile(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("probability must be in (0, 1), was NaN");
  }

  private static double upperTail(int x) {
    double sum = 0;
    for (int k = x + 1; k <= 100; k++) {
      sum += exactPmf(1000, 300, 100, k);
    }
    return sum;
  }

  private static double exactPmf(int total, int marked, int sampled, int x) {
    if (x < 0 || x > marked || sampled - x < 0 || sampled - x > total - marked) {
      return 0;
    }
    BigInteger ways = binomial(marked, x).multiply(binomial(total - marked, sampled - x));
    return new BigDecimal(ways)
        .divide(new BigDecimal(binomial(total, sampled)), MathContext.DECIMAL128)
        .doubleValue();
  }

  private static BigInteger binomial(int n, int k) {
    BigInteger result = BigInteger.ONE;
    for (int i = 0; i < k; i++) {
      result = result.multiply(BigInteger.valueOf(n - i)).divide(BigInteger.valueOf(i + 1));
    }
    return result;
  }
}
