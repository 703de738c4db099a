package dev.privagg.audit;

import dev.privagg.audit.CanaryScorer.Scores;
import dev.privagg.audit.CanaryScorer.Statistic;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What the canaries say about a run's privacy, next to what its ledger claims: per statistic the
 * one-shot estimate epsilon-hat of Andrew et al. (ICLR 2024) and the one-run lower bounds of
 * Steinke, Nasr and Jagielski (NeurIPS 2023) and of Mahloujifar, Melis and Chaudhuri (f-DP, 2024).
 *
 * <p>epsilon-hat is an estimate, not a bound: Gaussians fitted to the inserted and the unseen
 * canaries' scores, and the epsilon at {@code delta} between them. The one-run values are lower
 * bounds that hold with probability at least 1 - {@code significance}; one above the analytic
 * epsilon falsifies the claim. The verdict reads one bound, the f-DP one (the tighter), of the
 * {@code headline} statistic only, so it makes one test at {@code significance}, not six.
 */
public record AuditReport(
    int canaries,
    int dims,
    int deltas,
    double delta,
    double significance,
    double analyticEpsilon,
    Statistic headline,
    List<Estimate> estimates) {

  /** Ranked from good to bad. */
  public enum Verdict {
    /** The analytic epsilon is within or above epsilon-hat's interval and the f-DP bound. */
    CONSISTENT,
    /** epsilon-hat's whole interval is above the analytic epsilon, the f-DP bound is not. */
    ESTIMATE_ABOVE_CLAIM,
    /** The f-DP one-run bound is above the analytic epsilon: the claim is false at significance. */
    CLAIM_FALSIFIED
  }

  /**
   * One statistic's figures: the two fitted Gaussians (mean, sample standard deviation),
   * epsilon-hat from them with its 95% percentile-bootstrap interval, for {@link Statistic#FINAL}
   * also epsilon-hat against the closed-form null (NaN for the others), the two one-run lower
   * bounds (Steinke's as the reference computes it; the f-DP one with the union bound over all m +
   * 1 guess sets, {@link OneRunAudit#oneRunFdpFixedUnion}, since the verdict rests on it) and the
   * f-DP bound's threshold (above it a canary is guessed inserted); {@code scores} are the raw
   * values.
   */
  public record Estimate(
      Statistic statistic,
      double insertedMean,
      double insertedStd,
      double unseenMean,
      double unseenStd,
      double epsilonHat,
      double epsilonHatLow,
      double epsilonHatHigh,
      double closedFormEpsilonHat,
      double oneRunEpsilon,
      double oneRunFdpEpsilon,
      double oneRunThreshold,
      Scores scores) {}

  public AuditReport {
    estimates = List.copyOf(estimates);
  }

  /**
   * Audits {@code scorer}'s canaries against {@code analyticEpsilon} at {@code delta}, the lower
   * bounds at {@code significance}, the verdict on {@code headline}.
   */
  public static AuditReport of(
      CanaryScorer scorer,
      Statistic headline,
      double analyticEpsilon,
      double delta,
      double significance) {
    if (!(delta > 0 && delta < 1)) {
      throw new IllegalArgumentException("delta must be in (0, 1), was " + delta);
    }
    if (!(significance > 0 && significance < 1)) {
      throw new IllegalArgumentException("significance must be in (0, 1), was " + significance);
    }
    List<Estimate> estimates = new ArrayList<>();
    for (Statistic statistic : Statistic.values()) {
      estimates.add(estimate(scorer.scores(statistic), scorer.dims(), delta, significance));
    }
    int canaries = estimates.get(0).scores().inserted().length;
    return new AuditReport(
        canaries,
        scorer.dims(),
        scorer.deltas(),
        delta,
        significance,
        analyticEpsilon,
        headline,
        estimates);
  }

  /** The figures of {@code statistic}. */
  public Estimate estimate(Statistic statistic) {
    return estimates.stream().filter(e -> e.statistic() == statistic).findFirst().orElseThrow();
  }

  /** The figures the verdict reads. */
  public Estimate headlineEstimate() {
    return estimate(headline);
  }

  /** The headline's reading against the analytic epsilon (see {@link Verdict}). */
  public Verdict verdict() {
    Estimate e = headlineEstimate();
    if (e.oneRunFdpEpsilon() > analyticEpsilon) {
      return Verdict.CLAIM_FALSIFIED;
    }
    return e.epsilonHatLow() > analyticEpsilon ? Verdict.ESTIMATE_ABOVE_CLAIM : Verdict.CONSISTENT;
  }

  static Estimate estimate(Scores scores, int dims, double delta, double significance) {
    double[] in = scores.inserted();
    double[] out = scores.unseen();
    GaussianFit seen = GaussianFit.of(in);
    GaussianFit unseen = GaussianFit.of(out);
    double closedForm =
        scores.statistic() == Statistic.FINAL
            ? closedFormEpsilonHat(seen, dims, delta)
            : Double.NaN;
    OneRunAudit oneRun = new OneRunAudit(in, out);
    OneRunAudit.Bound fdp = oneRun.oneRunFdpFixedUnion(significance, delta);
    double[] interval = bootstrap(in, out, delta);
    return new Estimate(
        scores.statistic(),
        seen.mean(),
        seen.std(),
        unseen.mean(),
        unseen.std(),
        epsilonHat(unseen, seen, delta),
        interval[0],
        interval[1],
        closedForm,
        oneRun.epsilonOneRun(significance, delta),
        fdp.epsilon(),
        fdp.threshold(),
        scores);
  }

  /** Bootstrap resamples of epsilon-hat's interval; fixed, so a report is reproducible. */
  static final int BOOTSTRAP_RESAMPLES = 400;

  /**
   * The 2.5% and 97.5% quantiles of epsilon-hat over resamples (with replacement) of both score
   * sets: the estimate's spread from having finitely many canaries (Efron's percentile interval, as
   * jax_privacy's auditing bootstraps its metrics).
   */
  static double[] bootstrap(double[] in, double[] out, double delta) {
    SplittableRandom random = new SplittableRandom(0x5EED_CA1AL);
    double[] values = new double[BOOTSTRAP_RESAMPLES];
    double[] a = new double[in.length];
    double[] b = new double[out.length];
    for (int r = 0; r < BOOTSTRAP_RESAMPLES; r++) {
      for (int i = 0; i < a.length; i++) {
        a[i] = in[random.nextInt(in.length)];
      }
      for (int i = 0; i < b.length; i++) {
        b[i] = out[random.nextInt(out.length)];
      }
      values[r] = epsilonHat(GaussianFit.of(b), GaussianFit.of(a), delta);
    }
    Arrays.sort(values);
    return new double[] {
      values[(int) Math.floor(0.025 * (BOOTSTRAP_RESAMPLES - 1))],
      values[(int) Math.ceil(0.975 * (BOOTSTRAP_RESAMPLES - 1))]
    };
  }

  /**
   * Andrew et al.'s estimate between the fitted null and alternative; a degenerate fit (a zero
   * spread, as without noise) separates perfectly or not at all.
   */
  static double epsilonHat(GaussianFit unseen, GaussianFit seen, double delta) {
    if (unseen.std() == 0 || seen.std() == 0) {
      return seen.mean() == unseen.mean() ? 0 : Double.POSITIVE_INFINITY;
    }
    return OneShotEstimate.epsilonTwoGaussians(
        unseen.mean(), unseen.std(), seen.mean(), seen.std(), delta);
  }

  /** The final-model estimate against the exact null; below the null's mean there is no signal. */
  static double closedFormEpsilonHat(GaussianFit seen, int dims, double delta) {
    if (seen.std() == 0) {
      return seen.mean() > 0 ? Double.POSITIVE_INFINITY : 0;
    }
    if (dims < OneShotEstimate.GAUSSIAN_NULL_DIM && seen.mean() <= 0) {
      return 0;
    }
    return OneShotEstimate.epsilonClosedFormNullGaussianAlt(seen.mean(), seen.std(), dims, delta);
  }
}
