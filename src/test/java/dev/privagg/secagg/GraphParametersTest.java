package dev.privagg.secagg;

import static dev.privagg.secagg.ThreatModel.AdversaryClass.CURIOUS_SERVER;
import static dev.privagg.secagg.ThreatModel.AdversaryClass.NONE;
import static dev.privagg.secagg.ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GraphParametersTest {
  private static final ThreatModel FIVE_PERCENT_ADVERSARIES_THIRTY_PERCENT_DROPOUTS =
      new ThreatModel(0.05, 0.3, CURIOUS_SERVER);

  // FCP's table asserts threshold <= expected; every row matches it exactly, so equality is
  // asserted (columns: clients, adversarial rate, dropout rate, degree, threshold).
  // fcp/secagg/server/graph_parameter_finder_test.cc, HararyGraphParameterFinderTest_Feasible
  @ParameterizedTest(name = "{0} clients, adversarial {1}, dropout {2}")
  @CsvSource({
    "100, 0.45, 0.45, 92, 46",
    "1000, 0.45, 0.45, 822, 417",
    "10000, 0.45, 0.45, 3494, 1771",
    "100000, 0.45, 0.45, 5508, 2788",
    "1000000, 0.45, 0.45, 6240, 3156",
    "10, 0.33, 0.33, 8, 4",
    "100, 0.33, 0.33, 68, 34",
    "1000, 0.33, 0.33, 286, 150",
    "10000, 0.33, 0.33, 422, 221",
    "100000, 0.33, 0.33, 480, 251",
    "1000000, 0.33, 0.33, 518, 270",
    "10, 0.05, 0.33, 4, 2",
    "100, 0.05, 0.33, 28, 6",
    "1000, 0.05, 0.33, 72, 24",
    "10000, 0.05, 0.33, 86, 29",
    "100000, 0.05, 0.33, 96, 32",
    "1000000, 0.05, 0.33, 102, 34",
    "10, 0.33, 0.05, 4, 4",
    "100, 0.33, 0.05, 34, 29",
    "1000, 0.33, 0.05, 78, 60",
    "10000, 0.33, 0.05, 92, 70",
    "100000, 0.33, 0.05, 102, 77",
    "1000000, 0.33, 0.05, 110, 83",
    "10, 0.05, 0.05, 2, 2",
    "100, 0.05, 0.05, 12, 6",
    "1000, 0.05, 0.05, 30, 17",
    "10000, 0.05, 0.05, 34, 20",
    "100000, 0.05, 0.05, 36, 21",
    "1000000, 0.05, 0.05, 38, 22",
    "10, 0.33, 0.0, 4, 4",
    "100, 0.33, 0.0, 26, 25",
    "1000, 0.33, 0.0, 38, 36",
    "10000, 0.33, 0.0, 42, 40",
    "100000, 0.33, 0.0, 46, 44",
    "1000000, 0.33, 0.0, 50, 47",
    "10, 0.0, 0.33, 4, 2",
    "100, 0.0, 0.33, 26, 2",
    "1000, 0.0, 0.33, 38, 2",
    "10000, 0.0, 0.33, 42, 2",
    "100000, 0.0, 0.33, 46, 2",
    "1000000, 0.0, 0.33, 50, 2",
    "10, 0.0, 0.0, 2, 2",
    "100, 0.0, 0.0, 2, 2",
    "1000, 0.0, 0.0, 2, 2",
    "10000, 0.0, 0.0, 2, 2",
    "100000, 0.0, 0.0, 2, 2",
    "1000000, 0.0, 0.0, 2, 2"
  })
  void find_reproducesFcpTable_forCuriousServer(
      int clients, double adversarialRate, double dropoutRate, int degree, int threshold) {
    assertThat(
            GraphParameters.find(
                clients, new ThreatModel(adversarialRate, dropoutRate, CURIOUS_SERVER)))
        .isEqualTo(new GraphParameters(clients, degree, threshold));
  }

  // fcp/secagg/server/graph_parameter_finder_test.cc, HararyGraphParameterFinderTest_Feasible
  @ParameterizedTest(name = "{0} clients, adversarial {1}, dropout {2}")
  @CsvSource({
    "100, 0.3, 0.3, 92, 62",
    "1000, 0.3, 0.3, 872, 584",
    "10000, 0.3, 0.3, 4822, 3230",
    "100000, 0.3, 0.3, 9388, 6286",
    "1000000, 0.3, 0.3, 11136, 7454",
    "10, 0.05, 0.33, 8, 5",
    "100, 0.05, 0.33, 72, 39",
    "1000, 0.05, 0.33, 398, 223",
    "10000, 0.05, 0.33, 746, 420",
    "100000, 0.05, 0.33, 882, 496",
    "1000000, 0.05, 0.33, 970, 545",
    "10, 0.33, 0.05, 4, 4",
    "100, 0.33, 0.05, 42, 37",
    "1000, 0.33, 0.05, 132, 109",
    "10000, 0.33, 0.05, 178, 146",
    "100000, 0.33, 0.05, 196, 160",
    "1000000, 0.33, 0.05, 212, 173",
    "10, 0.05, 0.05, 2, 2",
    "100, 0.05, 0.05, 16, 11",
    "1000, 0.05, 0.05, 52, 37",
    "10000, 0.05, 0.05, 62, 44",
    "100000, 0.05, 0.05, 68, 48",
    "1000000, 0.05, 0.05, 74, 52",
    "10, 0.33, 0.0, 4, 4",
    "100, 0.33, 0.0, 26, 26",
    "1000, 0.33, 0.0, 38, 37",
    "10000, 0.33, 0.0, 42, 41",
    "100000, 0.33, 0.0, 46, 45",
    "1000000, 0.33, 0.0, 50, 49",
    "10, 0.0, 0.33, 8, 5",
    "100, 0.0, 0.33, 68, 35",
    "1000, 0.0, 0.33, 228, 115",
    "10000, 0.0, 0.33, 326, 164",
    "100000, 0.0, 0.33, 372, 187",
    "1000000, 0.0, 0.33, 410, 206",
    "10, 0.0, 0.0, 2, 2",
    "100, 0.0, 0.0, 2, 2",
    "1000, 0.0, 0.0, 2, 2",
    "10000, 0.0, 0.0, 2, 2",
    "100000, 0.0, 0.0, 2, 2",
    "1000000, 0.0, 0.0, 2, 2"
  })
  void find_reproducesFcpTable_forSemiMaliciousServer(
      int clients, double adversarialRate, double dropoutRate, int degree, int threshold) {
    assertThat(
            GraphParameters.find(
                clients, new ThreatModel(adversarialRate, dropoutRate, SEMI_MALICIOUS_SERVER)))
        .isEqualTo(new GraphParameters(clients, degree, threshold));
  }

  // fcp/secagg/server/graph_parameter_finder_test.cc, HararyGraphParameterFinderTest_Feasible
  @ParameterizedTest(name = "{0} clients, adversarial {1}, dropout {2}")
  @CsvSource({
    "10, 0.0, 0.33, 4, 2",
    "100, 0.0, 0.33, 26, 2",
    "1000, 0.0, 0.33, 38, 2",
    "10000, 0.0, 0.33, 42, 2",
    "100000, 0.0, 0.33, 46, 2",
    "1000000, 0.0, 0.33, 50, 2",
    "1000, 0.0, 0.0, 2, 2",
    "10000, 0.0, 0.0, 2, 2",
    "100000, 0.0, 0.0, 2, 2",
    "1000000, 0.0, 0.0, 2, 2"
  })
  void find_reproducesFcpTable_withoutAdversary(
      int clients, double adversarialRate, double dropoutRate, int degree, int threshold) {
    assertThat(GraphParameters.find(clients, new ThreatModel(adversarialRate, dropoutRate, NONE)))
        .isEqualTo(new GraphParameters(clients, degree, threshold));
  }

  // fcp/secagg/server/graph_parameter_finder_test.cc,
  // HararyGraphParameterFinderTest_InvalidOrUnfeasible;
  // the out-of-range rates and NONE with adversaries are already refused by ThreatModel.
  @ParameterizedTest(name = "{0} clients, adversarial {1}, dropout {2}, {3}")
  @CsvSource({
    "0, 0.1, 0.1, CURIOUS_SERVER",
    "1000, 0.1, 1.0, CURIOUS_SERVER",
    "1000, 0.1, -1.0, CURIOUS_SERVER",
    "1000, 0.5, 0.5, CURIOUS_SERVER",
    "1000, 0.5, 0.5, SEMI_MALICIOUS_SERVER",
    "1000, 0.33, 0.33, SEMI_MALICIOUS_SERVER",
    "1000, 0.5, 0.5, NONE"
  })
  void find_rejectsFcpsInvalidAndInfeasibleInstances(
      int clients,
      double adversarialRate,
      double dropoutRate,
      ThreatModel.AdversaryClass adversary) {
    assertThatThrownBy(
            () ->
                GraphParameters.find(
                    clients, new ThreatModel(adversarialRate, dropoutRate, adversary)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void find_namesTheSemiHonestRule_whenAdversariesPlusDropoutsExceedNinetyPercent() {
    assertThatThrownBy(() -> GraphParameters.find(1000, new ThreatModel(0.5, 0.5, CURIOUS_SERVER)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "adversarialClientRate + estimatedDropoutRate must be <= 0.9 against CURIOUS_SERVER,"
                + " was 0.5 + 0.5");
  }

  @Test
  void find_namesTheSemiMaliciousRule_whenAdversariesPlusTwiceDropoutsExceedNinetyPercent() {
    assertThatThrownBy(
            () -> GraphParameters.find(1000, new ThreatModel(0.33, 0.33, SEMI_MALICIOUS_SERVER)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "adversarialClientRate + 2 * estimatedDropoutRate must be <= 0.9 against"
                + " SEMI_MALICIOUS_SERVER, was 0.33 + 2 * 0.33");
  }

  @Test
  void find_acceptsRatesSummingToExactlyNinetyPercent() {
    assertThat(GraphParameters.find(100, new ThreatModel(0.45, 0.45, CURIOUS_SERVER)).degree())
        .isEqualTo(92);
  }

  @Test
  void find_rejectsClientCountsOutsideFcpsRange() {
    ThreatModel model = new ThreatModel(0.1, 0.1, CURIOUS_SERVER);
    assertThatThrownBy(() -> GraphParameters.find(0, model))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "numberOfClients must be in [1, 1000000] to compute Harary graph parameters, was 0");
    assertThatThrownBy(() -> GraphParameters.find(1_000_001, model))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("was 1000001");
  }

  @Test
  void find_pointsToTheCompleteGraph_whenNoSparseDegreeIsSafeForASmallCohort() {
    assertThatThrownBy(() -> GraphParameters.find(10, new ThreatModel(0.45, 0.45, CURIOUS_SERVER)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "no even degree in [2, numberOfClients - 2 = 8] gives security 2^-40 and correctness"
                + " 2^-20 for 10 clients")
        .hasMessageEndingWith("need the complete graph (see checkFullGraph)");
  }

  @Test
  void find_usesTheSmallestDegree_forTheSmallestCohortWithARing() {
    assertThat(GraphParameters.find(4, new ThreatModel(0, 0, CURIOUS_SERVER)))
        .isEqualTo(new GraphParameters(4, 2, 2));
  }

  // fcp/secagg/server/graph_parameter_finder_test.cc, FullGraphCeckParamsTest (both tests)
  @Test
  void checkFullGraph_acceptsFcpsValidThresholds() {
    for (int threshold = 42; threshold < 60; threshold++) {
      int t = threshold;
      assertThatCode(
              () ->
                  GraphParameters.checkFullGraph(
                      60, t, FIVE_PERCENT_ADVERSARIES_THIRTY_PERCENT_DROPOUTS))
          .as("threshold %d", t)
          .doesNotThrowAnyException();
    }
  }

  @Test
  void checkFullGraph_rejectsFcpsInvalidThresholds() {
    for (int threshold = 0; threshold < 42; threshold++) {
      int t = threshold;
      assertThatThrownBy(
              () ->
                  GraphParameters.checkFullGraph(
                      60, t, FIVE_PERCENT_ADVERSARIES_THIRTY_PERCENT_DROPOUTS))
          .as("threshold %d", t)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void checkFullGraph_requiresTheExpectedSurvivors_becauseTheThresholdIsAlsoTheQuorum() {
    assertThatThrownBy(
            () ->
                GraphParameters.checkFullGraph(
                    60, 41, FIVE_PERCENT_ADVERSARIES_THIRTY_PERCENT_DROPOUTS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "threshold must be >= ceil((1 - estimatedDropoutRate) * numberOfClients) = 42, was 41");
  }

  @Test
  void checkFullGraph_rejectsThresholdsOutsideTwoToTheClientCount() {
    assertThatThrownBy(
            () ->
                GraphParameters.checkFullGraph(
                    60, 61, FIVE_PERCENT_ADVERSARIES_THIRTY_PERCENT_DROPOUTS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threshold must be in [2, numberOfClients = 60], was 61");
    assertThatThrownBy(
            () ->
                GraphParameters.checkFullGraph(
                    0, 2, FIVE_PERCENT_ADVERSARIES_THIRTY_PERCENT_DROPOUTS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("numberOfClients must be > 0, was 0");
  }

  @Test
  void checkFullGraph_requiresMoreSharesThanAdversaries_againstACuriousServer() {
    ThreatModel model = new ThreatModel(0.5, 0.6, CURIOUS_SERVER);
    assertThatThrownBy(() -> GraphParameters.checkFullGraph(100, 50, model))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "against CURIOUS_SERVER the threshold must be > ceil(adversarialClientRate *"
                + " numberOfClients) = 50, was 50");
    assertThatCode(() -> GraphParameters.checkFullGraph(100, 51, model)).doesNotThrowAnyException();
  }

  @Test
  void checkFullGraph_requiresAMajorityBeyondTheAdversaries_againstASemiMaliciousServer() {
    ThreatModel model = new ThreatModel(0.2, 0.5, SEMI_MALICIOUS_SERVER);
    assertThatThrownBy(() -> GraphParameters.checkFullGraph(100, 60, model))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "against SEMI_MALICIOUS_SERVER the threshold must be > ceil((numberOfClients +"
                + " adversarialClientRate * numberOfClients) / 2) = 60, was 60");
    assertThatCode(() -> GraphParameters.checkFullGraph(100, 61, model)).doesNotThrowAnyException();
  }

  @Test
  void checkFullGraph_onlyBoundsDropouts_withoutAdversary() {
    assertThatCode(() -> GraphParameters.checkFullGraph(100, 40, new ThreatModel(0, 0.6, NONE)))
        .doesNotThrowAnyException();
  }

  @Test
  void constructor_rejectsOddOrOutOfRangeDegrees() {
    assertThatThrownBy(() -> new GraphParameters(10, 3, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("degree must be even and in [2, numberOfNodes - 1 = 9], was 3");
    assertThatThrownBy(() -> new GraphParameters(10, 10, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageEndingWith("was 10");
    assertThatThrownBy(() -> new GraphParameters(2, 2, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("numberOfNodes must be >= 3, was 2");
  }

  // In the spirit of FCP's SecretSharingHararyGraphParamTest_InvalidThreshold: a threshold must
  // be positive and at most the number of shares, the neighbours' plus the node's own.
  @Test
  void constructor_rejectsThresholdsBeyondTheShares() {
    assertThatThrownBy(() -> new GraphParameters(10, 4, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threshold must be in [1, degree + 1 = 5], was -1");
    assertThatThrownBy(() -> new GraphParameters(10, 4, 6))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threshold must be in [1, degree + 1 = 5], was 6");
    assertThat(new GraphParameters(10, 4, 5).threshold()).isEqualTo(5);
  }
}
