package dev.privagg.secagg;

import java.util.OptionalInt;

/**
 * The size, degree and Shamir threshold of a SecAgg+ Harary graph (FCP's {@code
 * HararyGraphParameters}, fcp/secagg/server/graph_parameter_finder.h).
 *
 * <p>The degree counts the other nodes each node shares its secrets with and is even, as in FCP's
 * parameter finder; FCP's graph adds one for a self-edge (see {@link HararyGraph}).
 *
 * @param numberOfNodes clients in the graph, at least 3
 * @param degree neighbours of each client, even and in [2, numberOfNodes - 1]
 * @param threshold shares needed to reconstruct a client's secret, in [1, degree + 1]; the shares
 *     are held by the neighbours and the client itself
 */
public record GraphParameters(int numberOfNodes, int degree, int threshold) {
  /** FCP's bound; nothing fundamental, but its test table stops here too. */
  public static final int MAX_NUMBER_OF_CLIENTS = 1_000_000;

  /** Security: the adversary learns a client's input with probability below 2^-40. */
  private static final double SECURITY_PARAMETER = 40;

  /** Correctness: the protocol fails to recover the sum with probability below 2^-20. */
  private static final double CORRECTNESS_PARAMETER = 20;

  /**
   * Added to the rates before rounding client counts, so that a rate times the number of clients
   * that should be an integer but rounds just below it is not rounded down in the insecure
   * direction.
   */
  private static final double ROUNDING_SLACK = 1e-14;

  /** FCP's feasibility limit on the fraction of clients that may be adversarial or lost. */
  private static final double MAX_LOST_FRACTION = 0.9;

  /** Checks that the three numbers describe a Harary graph and a usable threshold. */
  public GraphParameters {
    if (numberOfNodes < 3) {
      throw new IllegalArgumentException("numberOfNodes must be >= 3, was " + numberOfNodes);
    }
    if (degree < 2 || degree > numberOfNodes - 1 || degree % 2 != 0) {
      throw new IllegalArgumentException(
          "degree must be even and in [2, numberOfNodes - 1 = "
              + (numberOfNodes - 1)
              + "], was "
              + degree);
    }
    if (threshold < 1 || threshold > degree + 1) {
      throw new IllegalArgumentException(
          "threshold must be in [1, degree + 1 = " + (degree + 1) + "], was " + threshold);
    }
  }

  /**
   * The smallest even degree, and the threshold for it, with which SecAgg+ over a random Harary
   * graph of {@code numberOfClients} nodes is secure except with probability 2^-40 and correct
   * except with probability 2^-20 under {@code threatModel}. Reproduces FCP's {@code
   * ComputeHararyGraphParameters}.
   *
   * @throws IllegalArgumentException when the number of clients is outside [1, 1 000 000], when the
   *     rates are infeasible for the adversary class (adversarial + dropout rate above 0.9 for NONE
   *     and CURIOUS_SERVER, adversarial + 2 * dropout rate above 0.9 for SEMI_MALICIOUS_SERVER), or
   *     when no degree below numberOfClients - 1 qualifies (small cohorts with large rates; use the
   *     complete graph, see {@link #checkFullGraph})
   */
  public static GraphParameters find(int numberOfClients, ThreatModel threatModel) {
    if (numberOfClients <= 0 || numberOfClients > MAX_NUMBER_OF_CLIENTS) {
      throw new IllegalArgumentException(
          "numberOfClients must be in [1, "
              + MAX_NUMBER_OF_CLIENTS
              + "] to compute Harary graph parameters, was "
              + numberOfClients);
    }
    double adversarial = threatModel.adversarialClientRate();
    double dropout = threatModel.estimatedDropoutRate();
    if (threatModel.adversaryClass() == ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER) {
      if (adversarial + 2 * dropout > MAX_LOST_FRACTION) {
        throw new IllegalArgumentException(
            "adversarialClientRate + 2 * estimatedDropoutRate must be <= "
                + MAX_LOST_FRACTION
                + " against SEMI_MALICIOUS_SERVER, was "
                + adversarial
                + " + 2 * "
                + dropout);
      }
    } else if (adversarial + dropout > MAX_LOST_FRACTION) {
      throw new IllegalArgumentException(
          "adversarialClientRate + estimatedDropoutRate must be <= "
              + MAX_LOST_FRACTION
              + " against "
              + threatModel.adversaryClass()
              + ", was "
              + adversarial
              + " + "
              + dropout);
    }
    for (int degree = 2; degree < numberOfClients - 1; degree += 2) {
      OptionalInt threshold = thresholdFor(numberOfClients, degree, threatModel);
      if (threshold.isPresent()) {
        return new GraphParameters(numberOfClients, degree, threshold.getAsInt());
      }
    }
    throw new IllegalArgumentException(
        "no even degree in [2, numberOfClients - 2 = "
            + (numberOfClients - 2)
            + "] gives security 2^-40 and correctness 2^-20 for "
            + numberOfClients
            + " clients under "
            + threatModel
            + "; small cohorts with large rates need the complete graph (see checkFullGraph)");
  }

  /**
   * Checks that the complete-graph variant of SecAgg with {@code threshold} is safe for {@code
   * numberOfClients} clients under {@code threatModel}. Reproduces FCP's {@code
   * CheckFullGraphParameters}, where the threshold is also the number of clients that must survive
   * for the server to proceed, hence the lower bound from the dropout rate.
   *
   * @throws IllegalArgumentException naming the violated bound: the threshold must be in [2,
   *     numberOfClients] and at least ceil((1 - estimatedDropoutRate) * numberOfClients), and must
   *     exceed ceil(adversarialClientRate * numberOfClients) against CURIOUS_SERVER and
   *     ceil((numberOfClients + adversarialClientRate * numberOfClients) / 2) against
   *     SEMI_MALICIOUS_SERVER
   */
  public static void checkFullGraph(int numberOfClients, int threshold, ThreatModel threatModel) {
    if (numberOfClients <= 0) {
      throw new IllegalArgumentException("numberOfClients must be > 0, was " + numberOfClients);
    }
    if (threshold <= 1 || threshold > numberOfClients) {
      throw new IllegalArgumentException(
          "threshold must be in [2, numberOfClients = " + numberOfClients + "], was " + threshold);
    }
    double adversarial = threatModel.adversarialClientRate();
    double survivors = Math.ceil((1 - threatModel.estimatedDropoutRate()) * numberOfClients);
    if (threshold < survivors) {
      throw new IllegalArgumentException(
          "threshold must be >= ceil((1 - estimatedDropoutRate) * numberOfClients) = "
              + (long) survivors
              + ", was "
              + threshold);
    }
    switch (threatModel.adversaryClass()) {
      case CURIOUS_SERVER -> {
        double adversaries = Math.ceil(adversarial * numberOfClients);
        if (threshold <= adversaries) {
          throw new IllegalArgumentException(
              "against CURIOUS_SERVER the threshold must be > ceil(adversarialClientRate *"
                  + " numberOfClients) = "
                  + (long) adversaries
                  + ", was "
                  + threshold);
        }
      }
      case SEMI_MALICIOUS_SERVER -> {
        // The server must not obtain two disjoint sets of threshold shares of one client's
        // secrets (self-mask and pairwise masks); adversarial clients can supply shares to both.
        double bound = Math.ceil((numberOfClients + adversarial * numberOfClients) / 2);
        if (threshold <= bound) {
          throw new IllegalArgumentException(
              "against SEMI_MALICIOUS_SERVER the threshold must be > ceil((numberOfClients +"
                  + " adversarialClientRate * numberOfClients) / 2) = "
                  + (long) bound
                  + ", was "
                  + threshold);
        }
      }
      case NONE -> {
        // Without adversaries only the dropout bound applies.
      }
    }
  }

  /**
   * The threshold that makes {@code degree} secure and correct, if there is one: the graph of
   * honest survivors must stay connected, no client may have threshold-many adversarial neighbours,
   * and every client must keep threshold-many surviving neighbours, each failure bounded per
   * client.
   */
  private static OptionalInt thresholdFor(
      int numberOfClients, int degree, ThreatModel threatModel) {
    // The security parameter is split evenly between the two ways security can fail.
    double securityPerEvent = SECURITY_PARAMETER + 1;
    if (logProbabilityOfDisconnection(numberOfClients, degree, threatModel)
        >= -securityPerEvent * Math.log(2)) {
      return OptionalInt.empty();
    }
    int maxAdversarial =
        (int) Math.floor((threatModel.adversarialClientRate() + ROUNDING_SLACK) * numberOfClients);
    int minSurviving =
        (int)
            Math.ceil((1 - threatModel.estimatedDropoutRate() - ROUNDING_SLACK) * numberOfClients);
    var adversarialNeighbours =
        new HypergeometricDistribution(numberOfClients, maxAdversarial, degree);
    var survivingNeighbours = new HypergeometricDistribution(numberOfClients, minSurviving, degree);
    // Union bound over clients: each client's failure probability is divided by their number.
    double securityFailurePerClient = Math.pow(2, -securityPerEvent) / numberOfClients;
    double correctnessFailurePerClient = Math.pow(2, -CORRECTNESS_PARAMETER) / numberOfClients;

    // More than t1 adversarial neighbours, or at most t2 - 1 surviving ones, is rare enough; any
    // threshold in (t1, t2] works and the smallest is the cheapest to reconstruct.
    double t1 = adversarialNeighbours.complementQuantile(securityFailurePerClient);
    double t2 = survivingNeighbours.quantile(correctnessFailurePerClient);
    if (survivingNeighbours.cdf(t2) < correctnessFailurePerClient) {
      t2++;
    }
    if (threatModel.adversaryClass() == ThreatModel.AdversaryClass.SEMI_MALICIOUS_SERVER) {
      // The server must not get two disjoint sets of threshold shares (self-mask and pairwise
      // masks) from one client's neighbours: 2t - degree must exceed t1 as well.
      t1 = Math.ceil((t1 + degree - 1.25) / 2);
    }
    if (t2 <= t1) {
      return OptionalInt.empty();
    }
    // Shamir secret sharing needs a threshold of at least 2.
    return OptionalInt.of((int) Math.max(t1 + 1, 2));
  }

  /**
   * A union bound on ln P[the random Harary graph minus adversarial and dropped clients is
   * disconnected]: that takes degree / 2 consecutive ring positions removed in two places, which
   * for one pair of places has probability P[all degree nodes lost] of a hypergeometric draw, and
   * there are n (n - degree - 1) / 2 such pairs.
   */
  private static double logProbabilityOfDisconnection(
      int numberOfClients, int degree, ThreatModel threatModel) {
    double logNumberOfGapPairs =
        Math.log(numberOfClients) + Math.log(numberOfClients - degree - 1) - Math.log(2);
    int maxLost =
        (int) Math.floor((threatModel.adversarialClientRate() + ROUNDING_SLACK) * numberOfClients)
            + (int)
                Math.floor((threatModel.estimatedDropoutRate() + ROUNDING_SLACK) * numberOfClients);
    if (degree > maxLost) {
      return Double.NEGATIVE_INFINITY;
    }
    return logNumberOfGapPairs
        + new HypergeometricDistribution(numberOfClients, maxLost, degree).logPmf(degree);
  }
}
