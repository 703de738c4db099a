package dev.privagg.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The noncentral t CDF against scipy 1.17.1's {@code scipy.stats.nct.cdf} (Boost's non_central_t),
 * and its inverse in lambda against {@code brentq} on it, from 2 degrees of freedom (2 canaries a
 * side) to 199,998 (100,000).
 */
class NoncentralTTest {
  @ParameterizedTest
  @CsvSource({
    "2.0, 2, 1.0, 0.7066620495099096",
    "0.5, 2, 3.0, 0.00648648688160516",
    "40.0, 2, 35.0, 0.4651972483928638",
    "1.5, 10, 0.5, 0.8196538798602222",
    "-1.0, 10, 0.0, 0.17044656615103",
    "3.0, 98, 2.0, 0.8340707177096083",
    "15.0, 498, 14.1, 0.7898636945626551",
    "14.0, 498, 16.0, 0.03333759874562442",
    "-0.5, 498, 0.3, 0.2119571668143917",
    "316.0, 199998, 316.0, 0.4998496456132019",
    "10.0, 1998, 12.0, 0.024040905009917315"
  })
  void cdf_matchesScipy(double t, double nu, double lambda, double scipy) {
    assertThat(NoncentralT.cdf(t, nu, lambda)).isCloseTo(scipy, within(1e-10));
  }

  /** Far in the tail the CDF is 0 to the precision an audit needs. */
  @Test
  void cdf_farInTheLowerTail_isAboutZero() {
    // scipy: 1.215005906691354e-47
    assertThat(NoncentralT.cdf(300, 199998, 316)).isBetween(0.0, 1e-15);
  }

  @ParameterizedTest
  @CsvSource({
    "16.0, 498, 0.975, 13.796182758340658",
    "16.0, 498, 0.5, 15.99142206248133",
    "2.0, 198, 0.975, 0.027674846594900767",
    "0.3, 198, 0.975, -1.6605648787900469"
  })
  void lambdaWithCdf_matchesScipysRoot(double t, double nu, double p, double scipy) {
    assertThat(NoncentralT.lambdaWithCdf(t, nu, p)).isCloseTo(scipy, within(1e-8));
  }

  @Test
  void nonPositiveDegreesOfFreedom_areRefused_namingNu() {
    assertThatThrownBy(() -> NoncentralT.cdf(1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("nu must be > 0 and finite, was 0.0");
    assertThatThrownBy(() -> NoncentralT.lambdaWithCdf(1, 10, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("p must be in (0, 1), was 1.0");
  }
}
