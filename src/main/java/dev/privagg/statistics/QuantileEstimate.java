package dev.privagg.statistics;

/**
 * A quantile read from the noisy histogram, with a 95% interval from a parametric bootstrap of the
 * histogram's noise.
 */
public record QuantileEstimate(double level, double value, double lower, double upper) {}
