package dev.privagg.privacy;

/**
 * The privacy of a matrix-factorization run, round by round. With strategy C and noise sigma * Z,
 * the released prefix of t rounds is a post-processing of the first t rows of C x + sigma Z: one
 * Gaussian mechanism whose L2 sensitivity, under the participation schema, is s_t times the clip
 * norm (the min-separation sensitivity of C's leading t x t block). With sigma = z * clipNorm * s_n
 * planned for all n rounds, the prefix is a Gaussian with noise multiplier z * s_n / s_t (the
 * matrix mechanism's privacy: Denisov et al. 2022; Choquette-Choo et al. 2023 for several
 * participations), so epsilon grows with t and reaches the planned epsilon at t = n.
 *
 * <p>The ledger charges round t the increment of that Gaussian: multiplier z * s_n / sqrt(s_t^2 -
 * s_(t-1)^2). Gaussian mechanisms compose exactly into one with the sum of their 1/z^2 (Dong, Roth,
 * Su 2022, Cor. 3.3), so after t rounds the ledger is exactly the prefix's Gaussian for every
 * accountant that is exact on Gaussians (RDP, PLD), and its count is the number of rounds charged.
 */
public final class CorrelatedNoiseAccounting {
  private CorrelatedNoiseAccounting() {}

  /** The noise multiplier of the first t released rounds: z * s_n / s_t. */
  public static double prefixNoiseMultiplier(
      double noiseMultiplier, double plannedSensitivity, double sensitivityThroughRound) {
    requirePositive("plannedSensitivity", plannedSensitivity);
    requirePositive("sensitivityThroughRound", sensitivityThroughRound);
    if (!(noiseMultiplier >= 0 && Double.isFinite(noiseMultiplier))) {
      throw new IllegalArgumentException(
          "noiseMultiplier must be >= 0 and finite, was " + noiseMultiplier);
    }
    return noiseMultiplier * plannedSensitivity / sensitivityThroughRound;
  }

  /**
   * The ledger event of round t: the Gaussian that, composed with the rounds before it, gives the
   * prefix's Gaussian. {@code sensitivityBefore} is s_(t-1) (0 for the first round). Late rows of a
   * decaying C add less to s_t^2 than double precision resolves; such an increment is charged as
   * {@link #MIN_RELATIVE_INCREMENT} s_t, never as nothing, so every round costs something and the
   * ledger never under-counts by more than rounding.
   */
  public static PrivacyEvent roundCharge(
      double noiseMultiplier,
      double plannedSensitivity,
      double sensitivityBefore,
      double sensitivityThroughRound) {
    requirePositive("plannedSensitivity", plannedSensitivity);
    requirePositive("sensitivityThroughRound", sensitivityThroughRound);
    // The closed form of s_t can come out one rounding step below s_(t-1) once c_t^2 no longer
    // registers: that is no growth, charged at the least increment below.
    if (!(sensitivityBefore >= 0
        && sensitivityThroughRound >= sensitivityBefore * (1 - ROUNDING_TOLERANCE))) {
      throw new IllegalArgumentException(
          "the sensitivity of the first t rounds cannot shrink with t, was "
              + sensitivityBefore
              + " then "
              + sensitivityThroughRound);
    }
    double squaredIncrement =
        (sensitivityThroughRound - sensitivityBefore)
            * (sensitivityThroughRound + sensitivityBefore);
    double increment =
        Math.max(
            Math.sqrt(Math.max(squaredIncrement, 0)),
            MIN_RELATIVE_INCREMENT * sensitivityThroughRound);
    return PrivacyEvent.gaussian(noiseMultiplier * plannedSensitivity / increment, 1);
  }

  /** The least sensitivity increment a round is charged, relative to s_t. */
  static final double MIN_RELATIVE_INCREMENT = 1e-12;

  /** How far below s_(t-1) a computed s_t may fall by rounding alone. */
  static final double ROUNDING_TOLERANCE = 1e-12;

  /** Epsilon at delta of one Gaussian mechanism with this noise multiplier. */
  public static double epsilon(Accountant accountant, double noiseMultiplier, double delta) {
    return accountant
        .epsilon(PrivacyLedger.of(PrivacyEvent.gaussian(noiseMultiplier, 1)), delta)
        .epsilon();
  }

  /**
   * The smallest noise multiplier z (to 1e-9 relative) at which one Gaussian mechanism, the whole
   * planned run, spends at most {@code targetEpsilon} at {@code delta} by {@code accountant}.
   */
  public static double noiseMultiplierFor(
      Accountant accountant, double targetEpsilon, double delta) {
    if (!(targetEpsilon > 0 && Double.isFinite(targetEpsilon))) {
      throw new IllegalArgumentException(
          "targetEpsilon must be > 0 and finite, was " + targetEpsilon);
    }
    double lo = 1e-3;
    double hi = 1;
    while (epsilon(accountant, hi, delta) > targetEpsilon) {
      lo = hi;
      hi *= 2;
      if (hi > 1e6) {
        throw new IllegalArgumentException(
            "epsilon " + targetEpsilon + " at delta " + delta + " needs a noise multiplier > 1e6");
      }
    }
    if (epsilon(accountant, lo, delta) <= targetEpsilon) {
      throw new IllegalArgumentException(
          "epsilon " + targetEpsilon + " is reached without noise (multiplier < 1e-3)");
    }
    while (hi - lo > 1e-9 * hi) {
      double mid = 0.5 * (lo + hi);
      if (epsilon(accountant, mid, delta) <= targetEpsilon) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    return hi;
  }

  private static void requirePositive(String name, double value) {
    if (!(value > 0 && Double.isFinite(value))) {
      throw new IllegalArgumentException(name + " must be > 0 and finite, was " + value);
    }
  }
}
