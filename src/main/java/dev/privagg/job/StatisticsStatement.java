package dev.privagg.job;

import dev.privagg.avro.FeatureStatistics;
import dev.privagg.avro.QuantileStatistic;
import dev.privagg.avro.StatisticEstimate;
import dev.privagg.avro.StatisticsBlock;
import dev.privagg.avro.StatisticsRelease;
import dev.privagg.avro.StatisticsShare;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.MechanismKind;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.privacy.RoundCharge;
import dev.privagg.spec.JobSpec;
import dev.privagg.statistics.Block;
import dev.privagg.statistics.Estimate;
import dev.privagg.statistics.FeatureEstimates;
import dev.privagg.statistics.StatisticsEstimates;
import dev.privagg.statistics.StatisticsQuery;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The statistics a statistics job's release states next to its tensors: what {@link
 * StatisticsEstimates} reads from the noisy sums, and each block's share of the budget with the
 * epsilon it would spend alone.
 */
final class StatisticsStatement {
  private StatisticsStatement() {}

  /**
   * The statement of round {@code round}'s release {@code weights} (the noisy averages of the
   * blocks), after the charges {@code charges} (null when unknown: the blocks' epsilon is NaN).
   */
  static StatisticsRelease of(JobSpec spec, long round, float[] weights, PrivacyLedger charges) {
    StatisticsQuery query = spec.statistics();
    double z = spec.privacy().noiseMultiplier();
    int m = spec.rounds().expectedClients();
    StatisticsEstimates e = StatisticsEstimates.of(query, round, weights, m, z);
    List<FeatureStatistics> features = new ArrayList<>();
    for (int i = 0; i < e.features().size(); i++) {
      FeatureEstimates f = e.features().get(i);
      features.add(
          FeatureStatistics.newBuilder()
              .setName(f.name())
              .setLo(query.features().get(i).lo())
              .setHi(query.features().get(i).hi())
              .setSum(estimate(f.sum()))
              .setMean(estimate(f.mean()))
              .setVariance(estimate(f.variance()))
              .setStddev(estimate(f.stddev()))
              .setBinEdges(doubles(f.binEdges()))
              .setHistogram(
                  f.histogram() == null
                      ? List.of()
                      : f.histogram().stream().map(StatisticsStatement::estimate).toList())
              .setQuantiles(
                  f.quantiles().stream()
                      .map(q -> new QuantileStatistic(q.level(), q.value(), q.lower(), q.upper()))
                      .toList())
              .build());
    }
    Map<Double, Double> epsilonByShare = new HashMap<>();
    List<StatisticsBlock> blocks = new ArrayList<>();
    for (Block b : query.blocks()) {
      double epsilon =
          epsilonByShare.computeIfAbsent(b.share(), share -> blockEpsilon(spec, charges, share));
      blocks.add(
          new StatisticsBlock(
              b.name(),
              b.sensitivity(),
              b.share(),
              b.noiseStd(z),
              b.blockNoiseMultiplier(z),
              epsilon));
    }
    return new StatisticsRelease(m, query.maxRows(), estimate(e.count()), features, blocks);
  }

  /**
   * How a statistics round's charge of multiplier {@code charged} splits over its sums, for the
   * ledger: each block's share and its multiplier alone ({@link #blockMultiplier}).
   */
  static List<StatisticsShare> split(JobSpec spec, double charged) {
    return spec.statistics().blocks().stream()
        .map(
            b ->
                new StatisticsShare(
                    b.name(),
                    b.share(),
                    b.sensitivity(),
                    blockMultiplier(spec, charged, b.share())))
        .toList();
  }

  /**
   * The multiplier of one block with whatever else the round publishes about each client: a
   * charge's precision 1 / charged^2 is the sum's part (the sum's charged multiplier, z or z / 2
   * under replace-one) plus a noisy count's part (a minimum cohort); a block takes its share of the
   * sum's part and the whole count's. The count's part is the spec's (a job's query and noise do
   * not change mid-run, which the start enforces for the query).
   */
  static double blockMultiplier(JobSpec spec, double charged, double share) {
    if (!(charged > 0)) {
      return charged;
    }
    double z = spec.privacy().noiseMultiplier();
    RoundCharge c = spec.roundCharge();
    double full = c.chargedNoiseMultiplier(z);
    double sumOnly =
        new RoundCharge(c.samplingRate(), c.replaceOne(), c.unbounded(), 0, 0, c.distributed())
            .chargedNoiseMultiplier(z);
    double countPrecision =
        full > 0 && sumOnly > 0 ? Math.max(0, 1 / (full * full) - 1 / (sumOnly * sumOnly)) : 0;
    double sumPrecision = Math.max(0, 1 / (charged * charged) - countPrecision);
    return 1 / Math.sqrt(share * sumPrecision + countPrecision);
  }

  /**
   * Epsilon of a block alone: its sum is the same Gaussian on a share of the clip norm, so each
   * charge's multiplier divided by sqrt(share); NaN for charges without that form.
   */
  private static double blockEpsilon(JobSpec spec, PrivacyLedger charges, double share) {
    if (charges == null) {
      return Double.NaN;
    }
    List<PrivacyEvent> scaled = new ArrayList<>();
    for (PrivacyEvent event : charges.events()) {
      if (event.kind() == MechanismKind.DISTRIBUTED_DISCRETE_GAUSSIAN) {
        return Double.NaN;
      }
      scaled.add(
          event.kind() == MechanismKind.NO_OP
              ? event
              : new PrivacyEvent(
                  event.kind(),
                  blockMultiplier(spec, event.noiseMultiplier(), share),
                  event.samplingRate(),
                  event.count()));
    }
    return Accountant.named(spec.privacy().accountant())
        .epsilon(new PrivacyLedger(scaled), spec.privacy().delta())
        .epsilon();
  }

  private static StatisticEstimate estimate(Estimate e) {
    return e == null ? null : new StatisticEstimate(e.value(), e.std(), e.lower(), e.upper());
  }

  private static List<Double> doubles(double[] values) {
    List<Double> out = new ArrayList<>(values.length);
    for (double v : values) {
      out.add(v);
    }
    return out;
  }
}
