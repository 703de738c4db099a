package dev.privagg.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Client-side Poisson sampling. The statistical tests use a fixed seed, so they are deterministic;
 * each bound is 5 standard deviations, so a correct sampler with a fresh seed would fail one with
 * probability below 6e-7 (normal approximation of a binomial count).
 */
class ClientSamplingTest {
  private static final int CLIENTS = 6000;
  private static final double RATE = 200.0 / 6000;

  @Test
  void participation_isBernoulliAtTheSamplingRate() {
    ClientSampling sampling = new ClientSampling(RATE, 1);
    int rounds = 50;
    long count = 0;
    for (int r = 1; r <= rounds; r++) {
      count += sampling.cohort(CLIENTS, r).length;
    }
    double n = (double) CLIENTS * rounds;
    double sd = Math.sqrt(n * RATE * (1 - RATE)); // about 98 around 10,000
    assertThat(Math.abs(count - n * RATE)).isLessThan(5 * sd);
  }

  @Test
  void cohortSize_variesFromRoundToRoundAsAPoissonCohort() {
    ClientSampling sampling = new ClientSampling(RATE, 1);
    int[] sizes =
        IntStream.rangeClosed(1, 300).map(r -> sampling.cohort(CLIENTS, r).length).toArray();
    double mean = Arrays.stream(sizes).average().orElseThrow();
    double var = Arrays.stream(sizes).mapToDouble(s -> (s - mean) * (s - mean)).sum() / 299;
    // Binomial(6000, 1/30): variance 193.3. The sample variance of 300 draws has relative sd
    // about sqrt(2 / 299) = 0.082, so 5 sd is 41%; a fixed cohort (variance 0) fails clearly.
    assertThat(var).isBetween(193.3 * 0.59, 193.3 * 1.41);
    assertThat(Math.abs(mean - 200)).isLessThan(5 * Math.sqrt(193.3 / 300));
  }

  @Test
  void draws_areIndependentAcrossRoundsAndClients() {
    ClientSampling sampling = new ClientSampling(RATE, 7);
    int rounds = 100;
    long both = 0;
    long neighbours = 0;
    for (int r = 1; r < rounds; r++) {
      for (int c = 0; c < CLIENTS; c++) {
        boolean now = sampling.participates(c, r);
        both += now && sampling.participates(c, r + 1) ? 1 : 0;
        neighbours += now && sampling.participates(c + 1, r) ? 1 : 0;
      }
    }
    double pairs = (double) CLIENTS * (rounds - 1);
    double q2 = RATE * RATE;
    double sd = Math.sqrt(pairs * q2 * (1 - q2)); // about 21 around 660
    assertThat(Math.abs(both - pairs * q2)).isLessThan(5 * sd);
    assertThat(Math.abs(neighbours - pairs * q2)).isLessThan(5 * sd);
  }

  @Test
  void sameSeed_sameCohort_otherSeed_otherCohort() {
    int[] a = new ClientSampling(RATE, 3).cohort(CLIENTS, 12);
    assertThat(new ClientSampling(RATE, 3).cohort(CLIENTS, 12)).isEqualTo(a);
    assertThat(new ClientSampling(RATE, 4).cohort(CLIENTS, 12)).isNotEqualTo(a);
    assertThat(new ClientSampling(RATE, 3).cohort(CLIENTS, 13)).isNotEqualTo(a);
  }

  @Test
  void cohort_isExactlyTheClientsWhoseDrawSaysSo() {
    ClientSampling sampling = new ClientSampling(0.1, 5);
    int[] cohort = sampling.cohort(500, 9);
    assertThat(cohort).isSorted();
    for (int c = 0; c < 500; c++) {
      assertThat(Arrays.binarySearch(cohort, c) >= 0).isEqualTo(sampling.participates(c, 9));
    }
    assertThat(new ClientSampling(1.0, 5).cohort(500, 9)).hasSize(500);
  }

  @Test
  void samplingRate_outsideTheUnitInterval_isRefused() {
    assertThatThrownBy(() -> new ClientSampling(0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("samplingRate must be in (0, 1], was 0.0");
    assertThatThrownBy(() -> new ClientSampling(Double.NaN, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("samplingRate must be in (0, 1], was NaN");
  }
}
