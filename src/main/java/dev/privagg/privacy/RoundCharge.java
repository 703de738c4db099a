package dev.privagg.privacy;

/**
 * What one federated round costs, as a ledger event, given how rounds are formed (design.md
 * invariant 8).
 *
 * <ul>
 *   <li>Sum noise multiplier {@code z}: std {@code z * C} on a sum with L2 sensitivity C.
 *   <li>Noisy minimum cohort: a count with sensitivity 1 and noise std {@code countNoiseStd} is
 *       released with the sum.
 *   <li>Adaptive clipping: the shifted count of unclipped updates, sum of (b_i - 1/2), has
 *       sensitivity 1/2 and noise std sigma_b, so its noise multiplier is {@code
 *       clipCountNoiseMultiplier} = 2 sigma_b (Andrew et al., NeurIPS 2021, Sec. 3.1).
 *   <li>Released together, the sum and the counts are one Gaussian mechanism on the concatenated
 *       vector, whose noise multiplier is {@code (z^-2 + countNoiseStd^-2 +
 *       clipCountNoiseMultiplier^-2)^(-1/2)} (Andrew et al. 2021, Thm. 1 composing the count with
 *       the sum; Mironov 2017 for the Gaussian's RDP on the joint L2 sensitivity).
 *   <li>Early close at m updates: one client's presence can displace another's, so adjacency is
 *       replace-one, the sensitivity doubles to 2C (noise multiplier halves) and no amplification
 *       by sampling is claimed (q = 1).
 *   <li>A schedule that depends on the data (the next round opening at an early close): one client
 *       moves every later window, so no per-round bound holds; the round is charged as unbounded
 *       (noise multiplier 0, epsilon infinite).
 * </ul>
 *
 * @param unbounded true when no per-round bound holds
 * @param countNoiseStd std of the count noise, or 0 when there is no minimum-cohort rule
 * @param clipCountNoiseMultiplier noise multiplier of adaptive clipping's count, or 0 without it
 * @param distributed the sum's noise is the clients' discrete Gaussian shares (KLS21): charged as
 *     {@link MechanismKind#DISTRIBUTED_DISCRETE_GAUSSIAN}, whose Renyi bound composes with the
 *     counts' as a Gaussian's does, and never sampled
 */
public record RoundCharge(
    double samplingRate,
    boolean replaceOne,
    boolean unbounded,
    double countNoiseStd,
    double clipCountNoiseMultiplier,
    boolean distributed) {
  /** Validates the parameters. */
  public RoundCharge {
    Checks.samplingRate("samplingRate", samplingRate);
    Checks.nonNegativeFinite("countNoiseStd", countNoiseStd);
    Checks.nonNegativeFinite("clipCountNoiseMultiplier", clipCountNoiseMultiplier);
    if (distributed && samplingRate != 1) {
      throw new IllegalArgumentException(
          "a distributed discrete Gaussian round has no amplification by sampling to account;"
              + " samplingRate must be 1, was "
              + samplingRate);
    }
  }

  /** A charge of central noise. */
  public RoundCharge(
      double samplingRate,
      boolean replaceOne,
      boolean unbounded,
      double countNoiseStd,
      double clipCountNoiseMultiplier) {
    this(samplingRate, replaceOne, unbounded, countNoiseStd, clipCountNoiseMultiplier, false);
  }

  /** A charge of central noise without adaptive clipping. */
  public RoundCharge(double samplingRate, boolean replaceOne, double countNoiseStd) {
    this(samplingRate, replaceOne, false, countNoiseStd, 0);
  }

  /**
   * This charge at sampling rate {@code rate} if that is higher: a round whose members were
   * admitted under several rates is covered by the highest (amplification only weakens as q grows).
   */
  public RoundCharge atLeastSamplingRate(double rate) {
    Checks.samplingRate("rate", rate);
    return rate > samplingRate
        ? new RoundCharge(
            rate, replaceOne, unbounded, countNoiseStd, clipCountNoiseMultiplier, distributed)
        : this;
  }

  /** The noise multiplier the accountant charges for a round whose sum noise multiplier is z. */
  public double chargedNoiseMultiplier(double noiseMultiplier) {
    Checks.nonNegativeFinite("noiseMultiplier", noiseMultiplier);
    if (unbounded) {
      return 0;
    }
    double effective = noiseMultiplier;
    if (noiseMultiplier > 0 && (countNoiseStd > 0 || clipCountNoiseMultiplier > 0)) {
      double precision = 1 / (noiseMultiplier * noiseMultiplier);
      if (countNoiseStd > 0) {
        precision += 1 / (countNoiseStd * countNoiseStd);
      }
      if (clipCountNoiseMultiplier > 0) {
        precision += 1 / (clipCountNoiseMultiplier * clipCountNoiseMultiplier);
      }
      effective = 1 / Math.sqrt(precision);
    }
    return replaceOne ? effective / 2 : effective;
  }

  /** The ledger event for {@code rounds} such rounds. */
  public PrivacyEvent event(double noiseMultiplier, long rounds) {
    double charged = chargedNoiseMultiplier(noiseMultiplier);
    if (distributed) {
      return new PrivacyEvent(MechanismKind.DISTRIBUTED_DISCRETE_GAUSSIAN, charged, 1.0, rounds);
    }
    return replaceOne
        ? PrivacyEvent.gaussian(charged, rounds)
        : PrivacyEvent.sampledGaussian(charged, samplingRate, rounds);
  }

  /** "replace-one" or "add-remove-one", as written in ledgers and models. */
  public String adjacency() {
    return replaceOne ? "replace-one" : "add-remove-one";
  }
}
