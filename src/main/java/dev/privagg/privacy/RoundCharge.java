package dev.privagg.privacy;

/**
 * What one federated round costs, as a ledger event, given how rounds are formed (DESIGN invariant
 * 8).
 *
 * <ul>
 *   <li>Sum noise multiplier {@code z}: std {@code z * C} on a sum with L2 sensitivity C.
 *   <li>Noisy minimum cohort: a count with sensitivity 1 and noise std {@code countNoiseStd} is
 *       released with the sum; both are one Gaussian with effective noise multiplier {@code (z^-2 +
 *       countNoiseStd^-2)^(-1/2)} (Andrew et al., NeurIPS 2021, Sec. 3.1, composing the clipped
 *       count with the sum).
 *   <li>Early close at m updates: one client's presence can displace another's, so adjacency is
 *       replace-one, the sensitivity doubles to 2C (noise multiplier halves) and no amplification
 *       by sampling is claimed (q = 1).
 * </ul>
 *
 * @param countNoiseStd std of the count noise, or 0 when there is no minimum-cohort rule
 */
public record RoundCharge(double samplingRate, boolean replaceOne, double countNoiseStd) {
  /** Validates the parameters. */
  public RoundCharge {
    Checks.samplingRate("samplingRate", samplingRate);
    Checks.nonNegativeFinite("countNoiseStd", countNoiseStd);
  }

  /** The noise multiplier the accountant charges for a round whose sum noise multiplier is z. */
  public double chargedNoiseMultiplier(double noiseMultiplier) {
    Checks.nonNegativeFinite("noiseMultiplier", noiseMultiplier);
    double effective = noiseMultiplier;
    if (countNoiseStd > 0 && noiseMultiplier > 0) {
      effective =
          1
              / Math.sqrt(
                  1 / (noiseMultiplier * noiseMultiplier) + 1 / (countNoiseStd * countNoiseStd));
    }
    return replaceOne ? effective / 2 : effective;
  }

  /** The ledger event for {@code rounds} such rounds. */
  public PrivacyEvent event(double noiseMultiplier, long rounds) {
    double charged = chargedNoiseMultiplier(noiseMultiplier);
    return replaceOne
        ? PrivacyEvent.gaussian(charged, rounds)
        : PrivacyEvent.sampledGaussian(charged, samplingRate, rounds);
  }

  /** "replace-one" or "add-remove-one", as written in ledgers and models. */
  public String adjacency() {
    return replaceOne ? "replace-one" : "add-remove-one";
  }
}
