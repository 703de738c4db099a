package dev.privagg.statistics;

import java.util.List;

/**
 * One feature's released statistics; a statistic the feature did not ask for is null (the quantiles
 * an empty list).
 */
public record FeatureEstimates(
    String name,
    Estimate sum,
    Estimate mean,
    Estimate variance,
    Estimate stddev,
    List<Estimate> histogram,
    double[] binEdges,
    List<QuantileEstimate> quantiles) {}
