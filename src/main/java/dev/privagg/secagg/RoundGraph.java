package dev.privagg.secagg;

import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * The neighbour graph and threshold a round's roster gets, against an honest-but-curious server
 * ({@link ThreatModel.AdversaryClass#CURIOUS_SERVER}) with the job's two rates: FCP's sparse Harary
 * graph where its parameter finder finds one, else (small cohorts) the complete graph at the
 * smallest threshold FCP's full-graph rules allow. The job's Roster and {@code privagg secagg-cost}
 * both choose here.
 *
 * @param graph the graph, with a uniformly random node permutation when sparse
 * @param threshold t, the shares that reconstruct a secret
 */
public record RoundGraph(HararyGraph graph, int threshold) {
  /**
   * The graph for a roster of {@code numberOfClients}; empty when none is feasible (fewer than two
   * clients, or rates no threshold meets).
   *
   * @param maxDropoutRate the job's {@code aggregation.maxDropoutRate}
   * @param adversarialClientRate the job's {@code aggregation.adversarialClientRate}
   * @param random draws the Harary graph's permutation: a CSPRNG outside tests, or adversarial
   *     clients could arrange to surround an honest one
   */
  public static Optional<RoundGraph> choose(
      int numberOfClients,
      double maxDropoutRate,
      double adversarialClientRate,
      RandomGenerator random) {
    ThreatModel threat =
        new ThreatModel(
            adversarialClientRate, maxDropoutRate, ThreatModel.AdversaryClass.CURIOUS_SERVER);
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

  private static boolean fullGraphAllows(int n, int threshold, ThreatModel threat) {
    try {
      GraphParameters.checkFullGraph(n, threshold, threat);
      return true;
    } catch (IllegalArgumentException tooLowOrTooHigh) {
      return false;
    }
  }
}
