package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** privagg's graph parameters: the bounds of {@link RoundThresholds}, checked at every size. */
class RoundThresholdsTest {

  /** Every size from 3 to 2,000, then about 60 sizes per decade up to a million. */
  private static List<Integer> sizes() {
    List<Integer> sizes = new ArrayList<>();
    for (int n = 3; n <= 2000; n++) {
      sizes.add(n);
    }
    for (double n = 2000 * 1.04; n <= RoundThresholds.MAX_NUMBER_OF_CLIENTS; n *= 1.04) {
      sizes.add((int) n);
    }
    sizes.add(RoundThresholds.MAX_NUMBER_OF_CLIENTS);
    return sizes;
  }

  @ParameterizedTest(name = "dropout {0}, adversarial {1}")
  @CsvSource({"0.1, 0.1", "0.2, 0.1", "0.3, 0.1", "0.05, 0.05", "0.2, 0.0", "0.0, 0.2"})
  void atEverySizeTheFinderAccepts_bothUnionBoundsAreAtMost2ToTheMinus40(
      double dropout, double adversarial) {
    ThreatModel threat = RoundGraph.threatModel(dropout, adversarial, "semi-malicious-server");
    double worstExposure = Double.NEGATIVE_INFINITY;
    double worstFailure = Double.NEGATIVE_INFINITY;
    int accepted = 0;
    StringBuilder table = new StringBuilder();
    int smallest = RoundThresholds.smallestRoster(threat);
    for (int n : sizes()) {
      var choice = RoundThresholds.choose(n, threat);
      if (n >= smallest) {
        assertThat(choice).as("a graph at n = %d >= %d", n, smallest).isPresent();
      }
      if (choice.isEmpty()) {
        continue;
      }
      accepted++;
      RoundThresholds.Choice c = choice.get();
      double exposure = RoundThresholds.log2TwoListExposureBound(n, c, threat);
      double failure = RoundThresholds.log2UnmaskingFailureBound(n, c, threat);
      assertThat(exposure).as("log2 exposure bound at n = %d, %s", n, c).isLessThanOrEqualTo(-40);
      assertThat(failure).as("log2 failure bound at n = %d, %s", n, c).isLessThanOrEqualTo(-40);
      worstExposure = Math.max(worstExposure, exposure);
      worstFailure = Math.max(worstFailure, failure);
      if (List.of(3, 10, 30, 50, 70, 90, 100, 150, 300, 1000, 10_000, 1_000_000).contains(n)) {
        table.append(
            String.format(
                "  n %8d  k %4d  t %4d  %-8s  log2 exposure %8.2f  log2 failure %8.2f%n",
                n,
                c.neighbourhoodSize(),
                c.threshold(),
                c.complete() ? "complete" : "ring",
                exposure,
                failure));
      }
    }
    System.out.printf(
        "RoundThresholds at dropout %s, adversarial %s: %d sizes accepted, worst log2 bounds"
            + " %.2f (exposure), %.2f (failure)%n%s",
        dropout, adversarial, accepted, worstExposure, worstFailure, table);
    assertThat(accepted).isGreaterThan(2000);
  }

  @ParameterizedTest
  @CsvSource({
    "3, 0.1, 0.1, semi-malicious-server, 2",
    "100, 0.1, 0.1, semi-malicious-server, 56",
    "1000, 0.1, 0.1, semi-malicious-server, 551",
    "21, 0.3, 0.1, semi-malicious-server, 12",
    "1000, 0.3, 0.1, curious-server, 1"
  })
  void theSignatureThreshold_isAMajorityWithTheColludersCountedTwice_orOneForACuriousServer(
      int n, double dropout, double adversarial, String adversary, int expected) {
    ThreatModel threat = RoundGraph.threatModel(dropout, adversarial, adversary);

    assertThat(RoundThresholds.signatureThreshold(n, threat)).isEqualTo(expected);
  }

  @Test
  void everyGraphLeavesTheSurvivorListTSigners_whenTheDeclaredClientsAndOneMoreFail() {
    for (double[] rates : new double[][] {{0.1, 0.1}, {0.3, 0.1}, {0.2, 0.1}, {0.0, 0.3}}) {
      ThreatModel threat = RoundGraph.threatModel(rates[0], rates[1], "semi-malicious-server");
      for (int n = 2; n <= 600; n++) {
        int left = n - RoundThresholds.lost(n, threat);
        int needed = RoundThresholds.signatureThreshold(n, threat);
        assertThat(RoundThresholds.choose(n, threat).isEmpty() || needed <= left)
            .as("n = %d at %s: T = %d, %d left", n, threat, needed, left)
            .isTrue();
        // Two statements with T signers each need 2T <= n + A: never, so one list is answered.
        assertThat(2 * needed).isGreaterThan(n + RoundThresholds.colluders(n, threat));
      }
    }
  }

  @Test
  void theCompleteGraph_holdsForEveryPlacement_withTheMarginClient() {
    ThreatModel threat = RoundGraph.threatModel(0.3, 0.1, "semi-malicious-server");
    for (int n = 2; n <= 200; n++) {
      var choice = RoundThresholds.choose(n, threat);
      if (choice.isEmpty() || !choice.get().complete()) {
        continue;
      }
      int t = choice.get().threshold();
      int colluders = RoundThresholds.colluders(n, threat);
      assertThat(2 * t).as("2t at n = %d", n).isGreaterThan(n + colluders);
      // The D + 1 failing and the r + 1 = A + 1 rejecting a dealer's shares leave it t holders.
      assertThat(n - t)
          .as("clients that may fail or reject at n = %d", n)
          .isGreaterThanOrEqualTo(RoundThresholds.lost(n, threat) + colluders + 1);
    }
  }

  @Test
  void theSmallestRoster_isOneAboveTheLargestWithoutAGraph_forFeasibilityIsNotMonotone() {
    ThreatModel threat = RoundGraph.threatModel(0.3, 0.1, "semi-malicious-server");

    // Eight clients: 2t >= 9, but 3 failing and 1 rejecting leave 4. Nine: t = 5 of 9, 3 failing
    // and 1 rejecting leave 5. Ten (A = 1): 2t >= 12, but 4 failing and 2 rejecting leave 4. Forty:
    // 2t >= 45 (A = 4), but 13 failing and 5 rejecting leave 22.
    assertThat(RoundThresholds.choose(8, threat)).isEmpty();
    assertThat(RoundThresholds.choose(9, threat)).isPresent();
    assertThat(RoundThresholds.choose(10, threat)).isEmpty();
    assertThat(RoundThresholds.choose(40, threat)).isEmpty();
    assertThat(RoundThresholds.smallestRoster(threat)).isEqualTo(41);
  }

  @Test
  void theSmallestRoster_isFive_atTheDefaultRates_andFourGetsNoGraph() {
    ThreatModel threat = RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server");

    // Four: 2t >= 5, but one failing and one rejecting a dealer's shares leave 2.
    assertThat(RoundThresholds.smallestRoster(threat)).isEqualTo(5);
    assertThat(RoundThresholds.choose(5, threat).orElseThrow().threshold()).isEqualTo(3);
    assertThat(RoundThresholds.choose(4, threat)).isEmpty();
    assertThat(RoundThresholds.choose(3, threat)).isEmpty();
    assertThat(RoundThresholds.choose(2, threat)).isEmpty();
    assertThat(RoundThresholds.choose(1, threat)).isEmpty();
  }

  @Test
  void checkRates_namesTheRuleOfEachAdversary() {
    assertThatThrownBy(
            () ->
                RoundThresholds.checkRates(
                    RoundGraph.threatModel(0.3, 0.11, "semi-malicious-server")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("3 * adversarialClientRate + 2 * maxDropoutRate must be <= 0.9");
    assertThatThrownBy(
            () -> RoundThresholds.checkRates(RoundGraph.threatModel(0.5, 0.21, "curious-server")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("2 * adversarialClientRate + maxDropoutRate must be <= 0.9");
  }

  @Test
  void againstACuriousServer_theThresholdOnlyOutnumbersTheColluders() {
    ThreatModel threat = RoundGraph.threatModel(0.1, 0.1, "curious-server");
    RoundThresholds.Choice curious = RoundThresholds.choose(1000, threat).orElseThrow();
    RoundThresholds.Choice semi =
        RoundThresholds.choose(1000, RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server"))
            .orElseThrow();

    assertThat(curious.threshold()).isLessThan(semi.threshold());
    assertThat(curious.neighbourhoodSize()).isLessThan(semi.neighbourhoodSize());
    assertThat(RoundThresholds.log2UnmaskingFailureBound(1000, curious, threat))
        .isLessThanOrEqualTo(-40);
  }
}
