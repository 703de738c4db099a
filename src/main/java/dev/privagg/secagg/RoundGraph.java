package dev.privagg.secagg;

import java.util.List;
import java.util.Optional;

/**
 * The neighbour graph and threshold a round's roster gets for the job's threat model ({@link
 * RoundThresholds}): the sparse Harary graph where one meets the bounds, else the complete graph.
 * The sparse graph's permutation is {@link RosterPermutation}'s, derived from the round context and
 * the roster, so each client can check the Roster it is shown. The job's Roster and {@code privagg
 * secagg-cost} both choose here.
 *
 * @param graph the graph
 * @param threshold t, the shares that reconstruct a secret
 * @param rejectionLimit r ({@link RoundThresholds.Choice#rejectionLimit})
 */
public record RoundGraph(HararyGraph graph, int threshold, int rejectionLimit) {
  /**
   * The graph for {@code roster}; empty when none meets the bounds (fewer than {@link
   * RoundThresholds#smallestRoster} clients).
   *
   * @param threat the job's two rates and the adversary they are against
   */
  public static Optional<RoundGraph> choose(
      RoundContext ctx, List<AdvertisedKeys> roster, ThreatModel threat) {
    return RoundThresholds.choose(roster.size(), threat)
        .map(
            c ->
                c.complete()
                    ? new RoundGraph(
                        HararyGraph.complete(roster.size()), c.threshold(), c.rejectionLimit())
                    : new RoundGraph(
                        new HararyGraph(
                            c.neighbourhoodSize() - 1, RosterPermutation.of(ctx, roster)),
                        c.threshold(),
                        c.rejectionLimit()));
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
}
