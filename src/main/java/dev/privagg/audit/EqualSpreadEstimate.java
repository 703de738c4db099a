package dev.privagg.audit;

import dev.privagg.privacy.GaussianCalibration;

/**
 * The canaries' separation as a correct Gaussian mechanism shapes it: under the claim, a canary's
 * score is a post-processed Gaussian release, so the inserted and the unseen canaries' scores are
 * two normals of one spread s, N(a + mu s, s^2) and N(a, s^2), and the canary is mu-GDP (Dong,
 * Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022), with the epsilon at delta of a Gaussian
 * of noise multiplier 1/mu (Balle and Wang 2018, Theorem 8). A claim of epsilon at delta holds only
 * if mu is at most the mu of that epsilon.
 *
 * <p>Fitting the two spreads apart, as the one-shot estimate does ({@link
 * OneShotEstimate#epsilonTwoGaussians}), lets a chance mismatch of the sample spreads open tails in
 * which the privacy loss grows without bound, which inflates epsilon at small delta: at delta 1e-5
 * and 250 canaries a correct run's epsilon-hat came out 23% above the canaries' own separation.
 * With one pooled spread the statistic is Student's two-sample t, {@code t = (mean_in - mean_out) /
 * (s_pooled sqrt(1/n_in + 1/n_out))}, noncentral t with n_in + n_out - 2 degrees of freedom and
 * noncentrality {@code mu / sqrt(1/n_in + 1/n_out)} ({@link NoncentralT}). So:
 *
 * <ul>
 *   <li>{@link #mu()} is the median-unbiased estimate: the mu at which the observed t is the
 *       median;
 *   <li>{@link #muLow()} is the exact one-sided lower confidence limit at 1 - alpha: a run whose
 *       true mu is at most a claim's puts muLow above the claim with probability at most alpha.
 * </ul>
 *
 * <p>Scores whose inserted mean lies below the unseen mean give mu below 0, which is read as no
 * separation: epsilon 0 (the test is one-sided, as the one-run bounds are). Scores without spread
 * separate completely (mu infinite) or not at all.
 */
public record EqualSpreadEstimate(double mu, double muLow, double alpha) {

  /** The estimate from the inserted and unseen canaries' scores, the low end at 1 - alpha. */
  public static EqualSpreadEstimate of(double[] inserted, double[] unseen, double alpha) {
    if (!(alpha > 0 && alpha < 0.5)) {
      throw new IllegalArgumentException("alpha must be in (0, 0.5), was " + alpha);
    }
    GaussianFit in = GaussianFit.of(inserted);
    GaussianFit out = GaussianFit.of(unseen);
    int nIn = inserted.length;
    int nOut = unseen.length;
    double nu = nIn + nOut - 2;
    double pooled =
        Math.sqrt(((nIn - 1) * in.std() * in.std() + (nOut - 1) * out.std() * out.std()) / nu);
    double difference = in.mean() - out.mean();
    if (pooled == 0) {
      double mu = difference > 0 ? Double.POSITIVE_INFINITY : 0;
      return new EqualSpreadEstimate(mu, mu, alpha);
    }
    double standardError = Math.sqrt(1.0 / nIn + 1.0 / nOut);
    double t = difference / (pooled * standardError);
    return new EqualSpreadEstimate(
        standardError * NoncentralT.lambdaWithCdf(t, nu, 0.5),
        standardError * NoncentralT.lambdaWithCdf(t, nu, 1 - alpha),
        alpha);
  }

  /** The epsilon at {@code delta} of mu-GDP for the estimate. */
  public double epsilon(double delta) {
    return epsilonOfMu(mu, delta);
  }

  /** The epsilon at {@code delta} of mu-GDP for the low end: above a claim only w.p. alpha. */
  public double epsilonLow(double delta) {
    return epsilonOfMu(muLow, delta);
  }

  /** The epsilon at delta of a Gaussian mechanism with noise multiplier 1/mu; 0 for mu <= 0. */
  static double epsilonOfMu(double mu, double delta) {
    if (!(mu > 0)) {
      return 0;
    }
    return GaussianCalibration.gaussianEpsilon(1 / mu, delta);
  }
}
