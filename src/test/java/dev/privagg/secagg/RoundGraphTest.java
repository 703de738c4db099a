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

    RoundGraph chosen = RoundGraph.choose(100, 0.1, 0.1, new Random(1)).orElseThrow();

    assertThat(chosen.graph().degree()).isEqualTo(p.degree());
    assertThat(chosen.graph().neighbourhoodSize()).isEqualTo(p.degree() + 1);
    assertThat(chosen.threshold()).isEqualTo(p.threshold());
  }

  @Test
  void choose_forACohortTooSmallForASparseGraph_takesTheCompleteGraphAtTheSmallestThreshold() {
    assertThatThrownBy(() -> GraphParameters.find(2, TEN_PERCENT_EACH))
        .isInstanceOf(IllegalArgumentException.class);

    RoundGraph chosen = RoundGraph.choose(2, 0.1, 0.1, new Random(1)).orElseThrow();

    assertThat(chosen.graph().neighbourhoodSize()).isEqualTo(2);
    // FCP's full-graph rules: t >= ceil(0.9 * 2) = 2 survivors, t > ceil(0.1 * 2) = 1 colluder.
    assertThat(chosen.threshold()).isEqualTo(2);
  }

  @Test
  void choose_forOneClient_findsNoGraph() {
    assertThat(RoundGraph.choose(1, 0.1, 0.1, new Random(1))).isEmpty();
  }
}
