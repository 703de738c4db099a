package dev.privagg.cli;

import dev.privagg.correlated.Workload;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * Checks of command-line values that name the flag and its allowed range. Written as positive
 * conditions so that NaN fails every check.
 */
final class Flags {
  private final CommandSpec spec;

  Flags(CommandSpec spec) {
    this.spec = spec;
  }

  double positive(String flag, double value) {
    return require(value > 0 && Double.isFinite(value), flag, "must be > 0 and finite", value);
  }

  double nonNegative(String flag, double value) {
    return require(value >= 0 && Double.isFinite(value), flag, "must be >= 0 and finite", value);
  }

  double delta(String flag, double value) {
    return require(value > 0 && value < 1, flag, "must be in (0, 1)", value);
  }

  double samplingRate(String flag, double value) {
    return require(value > 0 && value <= 1, flag, "must be in (0, 1]", value);
  }

  long atLeastOne(String flag, long value) {
    if (value < 1) {
      throw fail(flag + " must be >= 1, was " + value);
    }
    return value;
  }

  /** Parses a comma-separated list of RDP orders, each > 1 and finite. */
  double[] orders(String flag, String list) {
    String[] parts = list.split(",");
    double[] orders = new double[parts.length];
    for (int i = 0; i < parts.length; i++) {
      try {
        orders[i] = Double.parseDouble(parts[i].trim());
      } catch (NumberFormatException e) {
        throw fail(flag + " must be a comma-separated list of numbers > 1, had '" + parts[i] + "'");
      }
      require(orders[i] > 1 && Double.isFinite(orders[i]), flag, "entries must be > 1", orders[i]);
    }
    return orders;
  }

  /** True when the command line gave {@code flag}, whatever its value. */
  boolean given(String flag) {
    return spec.commandLine().getParseResult().hasMatchedOption(flag);
  }

  private double require(boolean ok, String flag, String rule, double value) {
    if (!ok) {
      throw fail(flag + " " + rule + ", was " + value);
    }
    return value;
  }

  /** The banded planner's workload for a FedAvgM server momentum, or a usage error. */
  Workload momentumWorkload(String flag, double momentum) {
    if (!(momentum >= 0 && momentum < 1)) {
      throw fail(flag + " must be in [0, 1), was " + momentum);
    }
    return new Workload(momentum);
  }

  ParameterException fail(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
