package dev.privagg.privacy;

/**
 * Shared part of the basic and advanced composition accountants: each round of the ledger is
 * released as an (epsilon_r, delta_r) Gaussian mechanism, where epsilon_r is the tight epsilon of
 * the Gaussian at delta_r (Balle and Wang 2018, Theorem 8), amplified by Poisson sampling with rate
 * q as epsilon_q = log(1 + q (e^epsilon_r - 1)) at delta_q = q delta_r (Balle, Barthe, Gaboardi,
 * NeurIPS 2018: Poisson subsampling under add/remove adjacency).
 */
abstract class CompositionAccountant implements Accountant {

  /** Per-round (epsilon, delta) of one event's rounds, given the per-round delta to spend. */
  static double roundEpsilon(PrivacyEvent event, double roundDelta) {
    double q = event.samplingRate();
    // The unsampled mechanism may spend delta_r / q, since sampling scales delta by q.
    double mechanismDelta = Math.min(roundDelta / q, 0.5);
    double eps = GaussianCalibration.gaussianEpsilon(event.noiseMultiplier(), mechanismDelta);
    if (q == 1 || Double.isInfinite(eps)) {
      return eps;
    }
    return Math.log1p(q * Math.expm1(eps));
  }

  @Override
  public double delta(PrivacyLedger ledger, double epsilon) {
    Checks.nonNegativeFinite("epsilon", epsilon);
    // epsilon(delta) is non-increasing in delta: bisect on log delta for the smallest delta that
    // reaches the target, returning the safe (larger) side.
    double lo = -700;
    double hi = Math.log(0.999999);
    if (epsilon(ledger, Math.exp(hi)).epsilon() > epsilon) {
      return 1.0;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
      double mid = 0.5 * (lo + hi);
      if (epsilon(ledger, Math.exp(mid)).epsilon() > epsilon) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return Math.exp(hi);
  }
}
