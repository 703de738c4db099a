package dev.privagg.audit;

import dev.privagg.audit.CanaryScorer.Scores;
import dev.privagg.audit.CanaryScorer.Statistic;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What the canaries say about a run's privacy, next to what its ledger claims: per statistic the
 * one-shot estimate epsilon-hat of Andrew et al. (ICLR 2024), the equal-spread estimate of the
 * Gaussian model ({@link EqualSpreadEstimate}) and the one-run lower bounds of Steinke, Nasr and
 * Jagielski (NeurIPS 2023) and of Mahloujifar, Melis and Chaudhuri (f-DP, 2024).
 *
 * <p>epsilon-hat is an estimate, not a bound: Gaussians fitted to the inserted and the unseen
 * canaries' scores, their spreads apart, and the epsilon at {@code delta} between them; it is
 * reported, not tested, since a chance mismatch of the spreads inflates it. The verdict, on the
 * {@code headline} statistic only, makes two tests, each at {@code significance / 2}, so that a
 * correct claim is flagged by either with probability at most {@code significance}:
 *
 * <ul>
 *   <li>the f-DP one-run bound, a lower bound on epsilon that holds whatever the scores' law (exit
 *       4 when above the claim);
 *   <li>the equal-spread estimate's low end, exact when the scores are two normals of one spread,
 *       which a correct Gaussian mechanism gives the sum score of canaries in every round (exit 3).
 * </ul>
 *
 * <p>A one-run bound is capped by the number of canaries ({@link #refutableEpsilon}): a claim at or
 * above the cap cannot be refuted whatever the scores, and the verdict then says INCONCLUSIVE
 * rather than CONSISTENT.
 */
public record AuditReport(
    int canaries,
    int dims,
    int deltas,
    double delta,
    double significance,
    double analyticEpsilon,
    double refutableEpsilon,
    Statistic headline,
    List<Estimate> estimates) {

  /** Ranked from good to bad. */
  public enum Verdict {
    /**
     * Neither test flags the claim, and the f-DP bound could have refuted it: the claim is below
     * {@link #refutableEpsilon}.
     */
    CONSISTENT,
    /**
     * Neither test flags the claim, but no f-DP bound from this many canaries could refute it, even
     * with the inserted canaries all scoring above the unseen: the audit has no power against it.
     */
    INCONCLUSIVE,
    /**
     * The equal-spread estimate's low end is above the claim, the f-DP bound is not: the claim is
     * false at significance / 2 if the scores are two normals of one spread.
     */
    ESTIMATE_ABOVE_CLAIM,
    /**
     * The f-DP one-run bound is above the claim: the claim is false at significance / 2, whatever
     * the scores' law.
     */
    CLAIM_FALSIFIED
  }

  /**
   * One statistic's figures: the two fitted Gaussians (mean, sample standard deviation),
   * epsilon-hat from them with its 95% percentile-bootstrap interval, the equal-spread estimate and
   * its one-sided low end at 1 - significance / 2 ({@link EqualSpreadEstimate}), for {@link
   * Statistic#FINAL} also epsilon-hat against the closed-form null (NaN for the others), the two
   * one-run lower bounds at significance / 2 (Steinke's as the reference computes it; the f-DP one
   * with the union bound over all m + 1 guess sets, {@link OneRunAudit#oneRunFdpFixedUnion}, since
   * the verdict rests on it) and the f-DP bound's threshold (above it a canary is guessed
   * inserted); {@code scores} are the raw values.
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
      double equalSpreadEpsilon,
      double equalSpreadEpsilonLow,
      double closedFormEpsilonHat,
      double oneRunEpsilon,
      double oneRunFdpEpsilon,
      double oneRunThreshold,
      Scores scores) {}

  public AuditReport {
    estimates = List.copyOf(estimates);
  }

  /**
   * Audits {@code scorer}'s canaries against {@code analyticEpsilon} at {@code delta}, the verdict
   * on {@code headline} flagging a correct claim with probability at most {@code significance}.
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
        refutableEpsilon(canaries, significance, delta),
        headline,
        estimates);
  }

  /**
   * The largest epsilon the verdict's f-DP bound can refute with {@code canaries} inserted and as
   * many unseen, at {@code significance} for the whole verdict: the bound when every inserted
   * canary scores above every unseen one. No scores do better: a threshold's guesses then are all
   * right up to {@code canaries} of them, and the bound grows with the right guesses at a given
   * number of guesses.
   */
  public static double refutableEpsilon(int canaries, double significance, double delta) {
    if (canaries < 1) {
      throw new IllegalArgumentException("canaries must be >= 1, was " + canaries);
    }
    double[] inserted = new double[canaries];
    double[] unseen = new double[canaries];
    for (int i = 0; i < canaries; i++) {
      inserted[i] = canaries + i;
      unseen[i] = i;
    }
    return new OneRunAudit(inserted, unseen)
        .oneRunFdpFixedUnion(testSignificance(significance), delta)
        .epsilon();
  }

  /** The canary count above which this report's f-DP bound could refute its claim. */
  public static final int MAX_CANARIES = 100_000;

  /**
   * The fewest canaries whose f-DP bound could refute {@code claim} ({@link #refutableEpsilon}
   * above it), or -1 when not even {@value #MAX_CANARIES} could.
   */
  public static int canariesToRefute(double claim, double significance, double delta) {
    if (!(refutableEpsilon(MAX_CANARIES, significance, delta) > claim)) {
      return -1;
    }
    // The cap grows with the count: the fewest by bisection between a count that falls short and
    // one that does not.
    int lo = 1;
    int hi = 2;
    while (!(refutableEpsilon(hi, significance, delta) > claim)) {
      lo = hi;
      hi = Math.min(2 * hi, MAX_CANARIES);
    }
    while (hi - lo > 1) {
      int mid = (lo + hi) >>> 1;
      if (refutableEpsilon(mid, significance, delta) > claim) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    return hi;
  }

  /** Each of the verdict's two tests runs at half the significance: a union bound over both. */
  static double testSignificance(double significance) {
    return significance / 2;
  }

  /** The figures of {@code statistic}. */
  public Estimate estimate(Statistic statistic) {
    return estimates.stream().filter(e -> e.statistic() == statistic).findFirst().orElseThrow();
  }

  /** The figures the verdict reads. */
  public Estimate headlineEstimate() {
    return estimate(headline);
  }

  /**
   * The headline's reading against the analytic epsilon (see {@link Verdict}): falsified by the
   * f-DP bound, else flagged by the equal-spread low end, else inconclusive when the claim is at or
   * above what the f-DP bound could refute, else consistent.
   */
  public Verdict verdict() {
    Estimate e = headlineEstimate();
    if (e.oneRunFdpEpsilon() > analyticEpsilon) {
      return Verdict.CLAIM_FALSIFIED;
    }
    if (e.equalSpreadEpsilonLow() > analyticEpsilon) {
      return Verdict.ESTIMATE_ABOVE_CLAIM;
    }
    return analyticEpsilon < refutableEpsilon ? Verdict.CONSISTENT : Verdict.INCONCLUSIVE;
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
    double alpha = testSignificance(significance);
    OneRunAudit oneRun = new OneRunAudit(in, out);
    OneRunAudit.Bound fdp = oneRun.oneRunFdpFixedUnion(alpha, delta);
    double[] interval = bootstrap(in, out, delta);
    EqualSpreadEstimate equalSpread = EqualSpreadEstimate.of(in, out, alpha);
    return new Estimate(
        scores.statistic(),
        seen.mean(),
        seen.std(),
        unseen.mean(),
        unseen.std(),
        epsilonHat(unseen, seen, delta),
        interval[0],
        interval[1],
        equalSpread.epsilon(delta),
        equalSpread.epsilonLow(delta),
        closedForm,
        oneRun.epsilonOneRun(alpha, delta),
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
