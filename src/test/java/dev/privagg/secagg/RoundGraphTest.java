package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The graph a roster gets (the job's Roster and {@code privagg secagg-cost} choose alike). */
class RoundGraphTest {
  private static final ThreatModel TEN_PERCENT_EACH =
      new ThreatModel(0.1, 0.1, ThreatModel.AdversaryClass.CURIOUS_SERVER);

  @Test
  void choose_whereFcpsFinderFindsAGraph_takesItsDegreeAndThreshold() {
    GraphParameters p = GraphParameters.find(100, TEN_PERCENT_EACH);

    RoundGraph chosen = RoundGraph.choose(100, TEN_PERCENT_EACH, new Random(1)).orElseThrow();

    assertThat(chosen.graph().degree()).isEqualTo(p.degree());
    assertThat(chosen.graph().neighbourhoodSize()).isEqualTo(p.degree() + 1);
    assertThat(chosen.threshold()).isEqualTo(p.threshold());
  }

  @Test
  void choose_forACohortTooSmallForASparseGraph_takesTheCompleteGraphAtTheSmallestThreshold() {
    assertThatThrownBy(() -> GraphParameters.find(2, TEN_PERCENT_EACH))
        .isInstanceOf(IllegalArgumentException.class);

    RoundGraph chosen = RoundGraph.choose(2, TEN_PERCENT_EACH, new Random(1)).orElseThrow();

    assertThat(chosen.graph().neighbourhoodSize()).isEqualTo(2);
    // FCP's full-graph rules: t >= ceil(0.9 * 2) = 2 survivors, t > ceil(0.1 * 2) = 1 colluder.
    assertThat(chosen.threshold()).isEqualTo(2);
  }

  @Test
  void choose_forOneClient_findsNoGraph() {
    assertThat(RoundGraph.choose(1, TEN_PERCENT_EACH, new Random(1))).isEmpty();
  }

  @Test
  void againstASemiMaliciousServer_theThresholdExceedsHalfOfEveryNeighbourhood() {
    // So two survivor lists shown to two halves of a client's neighbours never give t shares of
    // both its secrets: each neighbour answers one list.
    for (double dropout : new double[] {0, 0.1, 0.2, 0.3}) {
      ThreatModel threat = RoundGraph.threatModel(dropout, 0.1, "semi-malicious-server");
      for (int n : new int[] {3, 5, 10, 30, 100, 1000, 10000}) {
        var chosen = RoundGraph.choose(n, threat, new Random(n));
        if (chosen.isEmpty()) {
          continue;
        }
        int k = chosen.get().graph().neighbourhoodSize();
        assertThat(2 * chosen.get().threshold())
            .as("2t against k = %d, n = %d, dropout %s", k, n, dropout)
            .isGreaterThan(k);
      }
    }
  }

  @Test
  void threatModel_namesTheSpecsAdversary_andRefusesOthers() {
    assertThat(RoundGraph.threatModel(0.2, 0.1, "curious-server"))
        .isEqualTo(new ThreatModel(0.1, 0.2, ThreatModel.AdversaryClass.CURIOUS_SERVER));
    assertThat(RoundGraph.threatModel(0.2, 0.1, "semi-malicious-server").adversaryClass())
        .isEqualTo(ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER);
    assertThatThrownBy(() -> RoundGraph.threatModel(0.2, 0.1, "malicious"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("adversary must be semi-malicious-server or curious-server, was 'malicious'");
  }
}
