package dev.privagg.secagg;

import java.util.Objects;

/**
 * What secure aggregation must withstand: the fraction of clients an adversary may control, the
 * fraction expected to drop out, and what the adversary (which always controls the server) may do.
 * Mirrors FCP's {@code SecureAggregationRequirements} (fcp/secagg/server/secagg_server_messages
 * .proto) without its {@code minimum_clients_in_server_visible_aggregate}, which the graph
 * parameters do not depend on.
 *
 * @param adversarialClientRate fraction of clients the adversary may control, in [0, 1); must be 0
 *     for {@link AdversaryClass#NONE}
 * @param estimatedDropoutRate fraction of clients expected to drop out, in [0, 1)
 * @param adversaryClass the adversary to protect against
 */
public record ThreatModel(
    double adversarialClientRate, double estimatedDropoutRate, AdversaryClass adversaryClass) {

  /** The adversary secure aggregation protects against (FCP's secagg_server_enums.proto). */
  public enum AdversaryClass {
    /** No adversary; only dropouts need to be tolerated. */
    NONE,
    /** An honest-but-curious server colluding with a fraction of the clients. */
    CURIOUS_SERVER,
    /**
     * A curious server colluding with a fraction of the clients that may also request, for one
     * client, both the shares of its self-mask and the shares of its pairwise masks (from the
     * neighbours that were not asked for self-mask shares), which would reveal its input.
     */
    SEMI_MALICIOUS_SERVER
  }

  /** Checks both rates are in [0, 1) (NaN fails) and that NONE comes without adversaries. */
  public ThreatModel {
    if (!(adversarialClientRate >= 0 && adversarialClientRate < 1)) {
      throw new IllegalArgumentException(
          "adversarialClientRate must be in [0, 1), was " + adversarialClientRate);
    }
    if (!(estimatedDropoutRate >= 0 && estimatedDropoutRate < 1)) {
      throw new IllegalArgumentException(
          "estimatedDropoutRate must be in [0, 1), was " + estimatedDropoutRate);
    }
    Objects.requireNonNull(adversaryClass, "adversaryClass");
    // FCP's parameter finder rejects this combination; rejecting it here keeps the contradiction
    // out of every caller, the full-graph check included.
    if (adversaryClass == AdversaryClass.NONE && adversarialClientRate > 0) {
      throw new IllegalArgumentException(
          "adversaryClass NONE requires adversarialClientRate = 0, was " + adversarialClientRate);
    }
  }
}
