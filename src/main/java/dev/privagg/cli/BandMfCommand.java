package dev.privagg.cli;

import dev.privagg.bandmf.BandMfPlan;
import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.correlated.BltPlan;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.ParticipationSchema;
import dev.privagg.correlated.Workload;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code privagg mechanism bandmf}: amplified banded MF for a population, cohort, rounds and target
 * epsilon: the error of each band count tried, the best, and next to it DP-FedAvg (one band) and a
 * BLT over the same clients without sampling (each client once per N / m rounds).
 */
@Command(
    name = "bandmf",
    mixinStandardHelpOptions = true,
    description = {
      "Amplified banded matrix factorization (Choquette-Choo et al. 2023): clients in B groups,"
          + " round t samples group (t - 1) mod B at q = m / floor(N / B), noise from a B-banded"
          + " C; the run is ceil(R / B) Poisson-sampled Gaussians.",
      "Prints the error of the average's prefix sums (noise std per unit of clip norm) for each"
          + " band count tried, the best, DP-FedAvg (B = 1) and a BLT without sampling."
    })
final class BandMfCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--population", required = true, description = "Clients N (>= --cohort).")
  long population;

  @Option(names = "--cohort", required = true, description = "Expected clients per round m.")
  int cohort;

  @Option(names = "--rounds", required = true, description = "Planned rounds R (>= 1).")
  long rounds;

  @Option(names = "--target-epsilon", required = true, description = "Epsilon of the run (> 0).")
  double targetEpsilon;

  @Option(names = "--delta", required = true, description = "Target delta in (0, 1).")
  double delta;

  @Option(
      names = "--bands",
      description = "Only this band count (default: try 1 to min(N / m, R), a quarter apart).")
  Integer bands;

  @Option(
      names = "--error",
      defaultValue = "mean",
      description = "Error to minimize: mean (default) or max over the rounds.")
  String error;

  @Option(
      names = "--momentum",
      defaultValue = "0",
      description =
          "The server's FedAvgM momentum beta in [0, 1): the bands are planned for the"
              + " models it releases, the prefix sums of its momentum buffer (default 0: SGD).")
  double momentum;

  @Option(
      names = "--accountant",
      defaultValue = "rdp",
      description = "rdp (default) or pld; pld calibrates the three best band counts again.")
  String accountant;

  @Option(
      names = "--blt-buffers",
      defaultValue = "3",
      description = "Buffers of the BLT compared with (1..8, default 3).")
  int bltBuffers;

  @Mixin JsonOption json;

  @Override
  public Integer call() {
    Flags flags = new Flags(spec);
    flags.atLeastOne("--rounds", rounds);
    flags.atLeastOne("--cohort", cohort);
    flags.positive("--target-epsilon", targetEpsilon);
    flags.delta("--delta", delta);
    if (population < cohort) {
      throw flags.fail("--population must be at least --cohort " + cohort + ", was " + population);
    }
    if (rounds > Integer.MAX_VALUE) {
      throw flags.fail("--rounds must be at most 2^31 - 1, was " + rounds);
    }
    if (!accountant.equals("pld") && !accountant.equals("rdp")) {
      throw flags.fail("--accountant must be pld or rdp, was '" + accountant + "'");
    }
    if (!(bltBuffers >= 1 && bltBuffers <= 8)) {
      throw flags.fail("--blt-buffers must be in [1, 8], was " + bltBuffers);
    }
    ErrorKind kind =
        switch (error) {
          case "max" -> ErrorKind.MAX;
          case "mean" -> ErrorKind.MEAN;
          default -> throw flags.fail("--error must be max or mean, was '" + error + "'");
        };
    Workload workload = flags.momentumWorkload("--momentum", momentum);
    Accountant acc = Accountant.named(accountant);
    BandMfPlan.Result plan;
    try {
      plan =
          BandMfPlan.plan(
              population,
              cohort,
              rounds,
              targetEpsilon,
              delta,
              acc,
              kind,
              workload,
              bands,
              BandedToeplitz.MAX_BANDS);
    } catch (IllegalArgumentException e) {
      throw flags.fail("--bands/--target-epsilon: " + e.getMessage());
    }
    // The BLT without sampling: every client once per N / m rounds, as an epoch in fixed order.
    int separation = BandMfPlan.maxBands(population, cohort, rounds);
    ParticipationSchema schema =
        new ParticipationSchema(rounds, separation, (int) ((rounds + separation - 1) / separation));
    BltPlan blt = BltPlan.optimized(schema, bltBuffers, kind);
    double bltZ = CorrelatedNoiseAccounting.noiseMultiplierFor(acc, targetEpsilon, delta);
    double bltError =
        bltZ
            * blt.sensitivity()
            * Math.sqrt(kind == ErrorKind.MEAN ? blt.meanError() : blt.maxError())
            / cohort;
    BandMfPlan.Candidate best = plan.best();
    BandMfPlan.Candidate one = plan.candidates().get(0);
    List<Object> rows = new ArrayList<>();
    StringBuilder text =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "%d clients, cohort %d, %d rounds, epsilon %s at delta %s; %s error of the"
                    + " %s, per unit of clip norm (z screened by %s)%n"
                    + "  bands  q         rounds/client  z         error%n",
                population,
                cohort,
                rounds,
                Text.number(targetEpsilon),
                Text.number(delta),
                kind.name().toLowerCase(Locale.ROOT),
                momentum == 0 ? "average's prefix sums" : "models under momentum " + momentum,
                plan.screenedBy()));
    for (BandMfPlan.Candidate c : plan.candidates()) {
      rows.add(row(c));
      text.append(
          String.format(
              Locale.ROOT,
              "  %5d  %-8s  %13d  %-8s  %s%n",
              c.bands(),
              Text.number(c.samplingRate()),
              c.participations(),
              Text.number(c.noiseMultiplier()),
              Text.number(c.averageError())));
    }
    text.append(
        String.format(
            Locale.ROOT,
            "best: %d bands, q %s, z %s (%s), error %s%n"
                + "DP-FedAvg (1 band, q %s): error %s, ratio best / DP-FedAvg %s%n",
            best.bands(),
            Text.number(best.samplingRate()),
            Text.number(best.noiseMultiplier()),
            accountant,
            Text.number(best.averageError()),
            Text.number(one.samplingRate()),
            Text.number(one.averageError()),
            Text.number(best.averageError() / one.averageError())));
    // A BLT is optimized for the prefix sums only: under momentum its error is not comparable.
    text.append(
        momentum == 0
            ? String.format(
                Locale.ROOT,
                "BLT (%d buffers, every client once per %d rounds, no sampling): z %s, error %s,"
                    + " ratio best / BLT %s",
                bltBuffers,
                separation,
                Text.number(bltZ),
                Text.number(bltError),
                Text.number(best.averageError() / bltError))
            : "BLT: planned for the prefix sums only, not compared under momentum");
    Map<String, Object> fields =
        Output.fields(
            "population", population,
            "cohort", cohort,
            "rounds", rounds,
            "targetEpsilon", Output.number(targetEpsilon),
            "delta", Output.number(delta),
            "error", kind.name().toLowerCase(Locale.ROOT),
            "momentum", Output.number(momentum),
            "accountant", accountant,
            "screenedBy", plan.screenedBy(),
            "candidates", rows,
            "best", row(best),
            "dpFedAvgError", Output.number(one.averageError()),
            "bltNoiseMultiplier", Output.number(bltZ),
            "bltError", momentum == 0 ? Output.number(bltError) : null);
    Output.print(spec.commandLine().getOut(), json.enabled, fields, text.toString());
    return 0;
  }

  private static Map<String, Object> row(BandMfPlan.Candidate c) {
    List<Object> coefficients = new ArrayList<>();
    for (double v : c.strategy().coefficients()) {
      coefficients.add(Output.number(v));
    }
    return Output.fields(
        "bands", c.bands(),
        "samplingRate", Output.number(c.samplingRate()),
        "participations", c.participations(),
        "noiseMultiplier", Output.number(c.noiseMultiplier()),
        "error", Output.number(c.averageError()),
        "coefficients", coefficients);
  }
}
