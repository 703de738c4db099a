package dev.privagg.cli;

import dev.privagg.sim.DistributedComparison;
import dev.privagg.sim.SimulationConfig;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code evaluate --distributed-bits}: distributed noise at each word size against central noise,
 * one target epsilon, every client in every round, run in memory ({@link DistributedComparison}).
 */
final class EvaluateDistributed {
  @Option(
      names = "--distributed-bits",
      split = ",",
      paramLabel = "BITS",
      description =
          "Compare distributed noise (privacy.mechanism distributed-discrete-gaussian) at these"
              + " bits per coordinate with central noise at --target-epsilon, every one of"
              + " --clients in every round, e.g. 14,16,18. Runs the job's rounds in memory (its"
              + " spec, gate, encoder, noise and server step; masks cancel, so they are left out)"
              + " and writes distributed.csv, distributed.json and distributed.png.")
  List<Integer> bits;

  @Option(
      names = "--dropout-rate",
      defaultValue = "0",
      description =
          "With --distributed-bits: each client drops out of each round with this probability"
              + " before it trains, the same clients in every variant (default 0). The simulated"
              + " jobs declare maxDropoutRate 0.1, and their gates let rounds that lost that"
              + " many through.")
  double dropoutRate;

  /** True when the command line asks for this comparison. */
  boolean requested() {
    return bits != null;
  }

  /** Checks the flags, plans every variant, runs them, writes the files and prints the table. */
  int run(EvaluateCommand.Shared shared, double epsilon) throws Exception {
    Flags flags = shared.flags();
    refuseFlags(flags);
    List<Integer> sizes = new ArrayList<>();
    for (Integer b : bits) {
      if (b == null || b < 8 || b > 32) {
        throw flags.fail("--distributed-bits must list word sizes from 8 to 32, had " + b);
      }
      if (sizes.contains(b)) {
        throw flags.fail("--distributed-bits lists " + b + " twice; give each once");
      }
      sizes.add(b);
    }
    if (!(dropoutRate >= 0 && dropoutRate < 1)) {
      throw flags.fail("--dropout-rate must be in [0, 1), was " + dropoutRate);
    }
    SimulationConfig given = shared.options().config(flags, Double.NaN, epsilon);
    // In memory no round waits, but the secure specs are read as the job reads them.
    SimulationConfig base =
        given.toBuilder().expectedClients(given.clients()).roundTimeoutMillis(8000).build();
    List<DistributedComparison.Variant> variants = DistributedComparison.variants(base, sizes);
    List<JobSpec> specs;
    try {
      specs = DistributedComparison.plan(variants);
    } catch (IllegalArgumentException e) {
      throw flags.fail("--distributed-bits " + e.getMessage());
    }
    PrintWriter out = shared.console();
    if (!shared.json()) {
      out.printf(
          "comparing distributed and central noise at epsilon %s, delta %s: %s, %s, %d clients"
              + " (dropout rate %s), %d rounds, %d seed%s%n",
          Text.number(epsilon),
          Text.number(base.delta()),
          base.dataset(),
          base.model(),
          base.clients(),
          Text.number(dropoutRate),
          base.rounds(),
          shared.seeds(),
          shared.seeds() == 1 ? "" : "s");
      for (int i = 0; i < variants.size(); i++) {
        JobSpec s = specs.get(i);
        out.printf(
            "  %-16s z %.4f%s%n",
            variants.get(i).name(),
            s.privacy().noiseMultiplier(),
            s.distributedNoise() == null
                ? ""
                : String.format(
                    ", shares for n_min = %d, %s",
                    s.distributedNoise().noiseShares(),
                    s.rounds().minimumCohort() > 0
                        ? "gate count " + Text.number(s.rounds().minimumCohort())
                        : "no gate"));
      }
      out.flush();
    }
    long start = System.currentTimeMillis();
    List<DistributedComparison.Run> runs =
        DistributedComparison.run(
            variants,
            shared.seeds(),
            dropoutRate,
            (run, round) -> {
              if (!shared.json() && (round.round() % 10 == 0 || round.round() == base.rounds())) {
                out.printf(
                    "  %-16s seed %d round %d/%d: accuracy %.4f (%.0f s)%n",
                    run.variant(),
                    run.seed(),
                    round.round(),
                    base.rounds(),
                    round.accuracy(),
                    (System.currentTimeMillis() - start) / 1000.0);
                out.flush();
              }
            });
    List<DistributedComparison.Row> rows = DistributedComparison.rows(variants, runs);
    DistributedComparison.write(shared.outputFolder(), base, dropoutRate, rows, runs);
    if (shared.json()) {
      Output.line(
          out,
          Output.fields(
              "type", "summary",
              "dataset", base.dataset(),
              "model", base.model(),
              "clients", base.clients(),
              "rounds", base.rounds(),
              "targetEpsilon", epsilon,
              "delta", base.delta(),
              "dropoutRate", dropoutRate,
              "variants", rows,
              "outputs", shared.outputFolder().toAbsolutePath().toString()));
      return 0;
    }
    out.println();
    out.printf(
        "%-16s %-8s %-12s %-30s %-28s %s%n",
        "variant", "z", "noise (C)", "accuracy (95% CI)", "vs central (95% CI)", "unsummed");
    for (DistributedComparison.Row r : rows) {
      out.printf(
          "%-16s %-8s %-12s %.4f [%.4f, %.4f]       %+.4f [%+.4f, %+.4f]    %d%n",
          r.variant(),
          String.format("%.3f", r.noiseMultiplier()),
          String.format("%.3f", r.noiseStdOfSum()),
          r.accuracy(),
          r.accuracyCi95Low(),
          r.accuracyCi95High(),
          r.gap(),
          r.gapLow(),
          r.gapHigh(),
          r.roundsWithoutSum());
    }
    out.println(
        "noise (C): the per-coordinate noise std on a round's sum of every client, in units of"
            + " C; vs central: paired by seed; unsummed: rounds the gate released as noise alone,"
            + " over all seeds");
    out.println(
        "wrote distributed.csv, distributed.json, distributed.png to " + shared.outputFolder());
    return 0;
  }

  /** Flags each variant sets for itself, or that mean nothing in memory. */
  private static void refuseFlags(Flags flags) {
    for (String flag :
        List.of(
            "--variants",
            "--mechanisms",
            "--noise-multipliers",
            "--cohorts",
            "--cohort",
            "--central",
            "--sampling",
            "--aggregation",
            "--adaptive-clipping",
            "--clip-lr",
            "--clip-count-noise",
            "--canaries",
            "--min-separation",
            "--max-participations",
            "--round-timeout-ms")) {
      if (flags.given(flag)) {
        throw flags.fail(
            flag
                + " does not go with --distributed-bits: every client takes part in every round"
                + " at a fixed C, and each variant sets its own aggregation; drop it");
      }
    }
  }
}
