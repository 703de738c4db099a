package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The graph a roster gets (the job's Roster and {@code privagg secagg-cost} choose alike). */
class RoundGraphTest {
  private static final ThreatModel SEMI_MALICIOUS =
      RoundGraph.threatModel(0.1, 0.1, "semi-malicious-server");

  @Test
  void choose_takesRoundThresholds_andTheRostersOwnPermutation() {
    Roster r = roster(100, 1);
    RoundThresholds.Choice c = RoundThresholds.choose(100, SEMI_MALICIOUS).orElseThrow();

    RoundGraph chosen = RoundGraph.choose(r.ctx, r.entries, SEMI_MALICIOUS).orElseThrow();

    assertThat(chosen.graph().neighbourhoodSize()).isEqualTo(c.neighbourhoodSize());
    assertThat(chosen.threshold()).isEqualTo(c.threshold());
    assertThat(chosen.graph().permutation()).isEqualTo(RosterPermutation.of(r.ctx, r.entries));
  }

  @Test
  void choose_forTheSmallestRoster_takesTheCompleteGraphInIndexOrder() {
    Roster r = roster(5, 2);

    RoundGraph chosen = RoundGraph.choose(r.ctx, r.entries, SEMI_MALICIOUS).orElseThrow();

    // 2t >= n + A + 1 = 6, and t <= n - (D + 1) - (A + 1) = 3: one client may drop out and one
    // reject a dealer's shares, whoever they are.
    assertThat(chosen.graph().neighbourhoodSize()).isEqualTo(5);
    assertThat(chosen.threshold()).isEqualTo(3);
    assertThat(chosen.graph().permutation()).containsExactly(0, 1, 2, 3, 4);
  }

  @Test
  void choose_forFourClients_findsNoGraph() {
    // 2t >= 5 needs t = 3, but one client failing and one rejecting leave 2.
    Roster r = roster(4, 3);
    assertThat(RoundGraph.choose(r.ctx, r.entries, SEMI_MALICIOUS)).isEmpty();
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

  /** A round context and n advertised entries of random bytes. */
  record Roster(RoundContext ctx, List<AdvertisedKeys> entries) {}

  static Roster roster(int n, long seed) {
    Random random = new Random(seed);
    byte[] session = new byte[16];
    random.nextBytes(session);
    List<AdvertisedKeys> entries = new ArrayList<>();
    IntStream.range(0, n)
        .forEach(
            i -> {
              byte[] a = new byte[32];
              byte[] b = new byte[32];
              byte[] c = new byte[32];
              random.nextBytes(a);
              random.nextBytes(b);
              random.nextBytes(c);
              entries.add(new AdvertisedKeys(a, b, c, c));
            });
    return new Roster(new RoundContext("graph-job", 1 + random.nextInt(10), session), entries);
  }
}
