package dev.privagg.secagg;

import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * The neighbour graph and threshold a round's roster gets for the job's threat model: FCP's sparse
 * Harary graph where its parameter finder finds one, else (small cohorts) the complete graph at the
 * smallest threshold FCP's full-graph rules allow. Against {@link
 * ThreatModel.AdversaryClass#SEMI_MALICIOUS_SERVER} (privagg's default) the threshold exceeds half
 * of each neighbourhood, so two survivor lists shown to two halves of a client's neighbours (a
 * lying server, or an operator's restore that announces survivors again) never give the job t
 * shares of both of the client's secrets, each client answering one list; {@link
 * ThreatModel.AdversaryClass#CURIOUS_SERVER} thresholds can be lower and do not cover that. The
 * job's Roster and {@code privagg secagg-cost} both choose here.
 *
 * @param graph the graph, with a uniformly random node permutation when sparse
 * @param threshold t, the shares that reconstruct a secret
 */
public record RoundGraph(HararyGraph graph, int threshold) {
  /**
   * The graph for a roster of {@code numberOfClients}; empty when none is feasible (fewer than two
   * clients, or rates no threshold meets).
   *
   * @param threat the job's two rates and the adversary they are against
   * @param random draws the Harary graph's permutation: a CSPRNG outside tests, or adversarial
   *     clients could arrange to surround an honest one
   */
  public static Optional<RoundGraph> choose(
      int numberOfClients, ThreatModel threat, RandomGenerator random) {
    try {
      GraphParameters p = GraphParameters.find(numberOfClients, threat);
      HararyGraph g = HararyGraph.shuffled(numberOfClients, p.degree(), random);
      return Optional.of(new RoundGraph(g, p.threshold()));
    } catch (IllegalArgumentException noSparseGraph) {
      for (int t = 2; t <= numberOfClients; t++) {
        if (fullGraphAllows(numberOfClients, t, threat)) {
          return Optional.of(new RoundGraph(HararyGraph.complete(numberOfClients), t));
        }
      }
      return Optional.empty();
    }
  }

  /**
   * The threat model of a job's {@code aggregation} section: its two rates against {@code
   * adversary} ({@code semi-malicious-server} or {@code curious-server}).
   */
  public static ThreatModel threatModel(
      double maxDropoutRate, double adversarialClientRate, String adversary) {
    ThreatModel.AdversaryClass kind =
        switch (adversary) {
          case "semi-malicious-server" -> ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER;
          case "curious-server" -> ThreatModel.AdversaryClass.CURIOUS_SERVER;
          default ->
              throw new IllegalArgumentException(
                  "adversary must be semi-malicious-server or curious-server, was '"
                      + adversary
                      + "'");
        };
    return new ThreatModel(adversarialClientRate, maxDropoutRate, kind);
  }

  private static boolean fullGraphAllows(int n, int threshold, ThreatModel threat) {
    try {
      GraphParameters.checkFullGraph(n, threshold, threat);
      return true;
    } catch (IllegalArgumentException tooLowOrTooHigh) {
      return false;
    }
  }
}
