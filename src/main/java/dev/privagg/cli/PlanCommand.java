package dev.privagg.cli;

import dev.privagg.bandmf.BandMfPlan;
import dev.privagg.correlated.BandedToeplitz;
import dev.privagg.correlated.BltPlan;
import dev.privagg.correlated.BufferedToeplitz;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.ParticipationSchema;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import dev.privagg.privacy.NoisePlanner;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg plan}: the smallest noise multiplier that fits a target epsilon. */
@Command(
    name = "plan",
    mixinStandardHelpOptions = true,
    description = {
      "Smallest noise multiplier that keeps T rounds within a target epsilon.",
      "Rounds are Poisson-sampled at rate q; the result's epsilon is always <= the target.",
      "With --mechanism blt: correlated noise over T rounds where a client contributes at most K"
          + " times, in rounds at least B apart; the run is one Gaussian mechanism, so z is"
          + " planned for it at once (no sampling; details: privagg mechanism blt).",
      "With --mechanism bandmf: amplified banded MF over --population N clients with --cohort m"
          + " a round: the band count B (or --bands) and z of least error; the run is ceil(T / B)"
          + " Gaussians sampled at m / floor(N / B) (details: privagg mechanism bandmf)."
    })
final class PlanCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--target-epsilon", required = true, description = "Epsilon budget (> 0).")
  double targetEpsilon;

  @Option(names = "--delta", required = true, description = "Target delta in (0, 1).")
  double delta;

  @Option(names = "--rounds", required = true, description = "Planned rounds T (>= 1).")
  long rounds;

  @Option(
      names = "--sampling-rate",
      description = "Poisson sampling rate q in (0, 1] (independent noise only).")
  Double samplingRate;

  @Option(
      names = "--mechanism",
      defaultValue = "independent",
      description = "independent (default: noise drawn afresh each round), blt or bandmf.")
  String mechanism;

  @Option(
      names = "--min-sep",
      description = "blt: rounds between a client's contributions, r' - r >= B (default 1).")
  Integer minSep;

  @Option(names = "--max-participations", description = "blt: contributions per client K.")
  Integer maxParticipations;

  @Option(names = "--buffers", description = "blt: BLT buffers, 1 to 8 (default 3).")
  Integer buffers;

  @Option(names = "--population", description = "bandmf: clients N (>= --cohort).")
  Long population;

  @Option(names = "--cohort", description = "bandmf: expected clients per round m.")
  Integer cohort;

  @Option(names = "--bands", description = "bandmf: this band count B (default: planned).")
  Integer bands;

  @Option(
      names = "--momentum",
      defaultValue = "0",
      description =
          "bandmf: The server's FedAvgM momentum beta in [0, 1): the bands are planned for the"
              + " models it releases, the prefix sums of its momentum buffer (default 0: SGD).")
  double momentum;

  @Mixin AccountantOption accountant;

  @Mixin JsonOption json;

  @Override
  public Integer call() {
    Flags flags = new Flags(spec);
    flags.positive("--target-epsilon", targetEpsilon);
    flags.delta("--delta", delta);
    flags.atLeastOne("--rounds", rounds);
    if (mechanism.equals("bandmf")) {
      return planBandMf(flags);
    }
    if (population != null || cohort != null || bands != null) {
      throw flags.fail("--population, --cohort and --bands are bandmf's: add --mechanism bandmf");
    }
    if (mechanism.equals("blt")) {
      return planBlt(flags);
    }
    if (!mechanism.equals("independent")) {
      throw flags.fail("--mechanism must be independent, blt or bandmf, was '" + mechanism + "'");
    }
    if (minSep != null || maxParticipations != null || buffers != null) {
      throw flags.fail(
          "--min-sep, --max-participations and --buffers are blt's: add --mechanism blt");
    }
    if (samplingRate == null) {
      throw flags.fail("--sampling-rate is required with independent noise (1 for none)");
    }
    flags.samplingRate("--sampling-rate", samplingRate);
    NoisePlanner.Plan plan =
        new NoisePlanner(accountant.build(flags)).plan(targetEpsilon, delta, rounds, samplingRate);
    String text =
        String.format(
            "noise multiplier %s (epsilon %s <= %s at delta %s over %d rounds, q %s, accountant %s)",
            Text.number(plan.noiseMultiplier()),
            Text.number(plan.spent().epsilon()),
            Text.number(targetEpsilon),
            Text.number(delta),
            rounds,
            Text.number(samplingRate),
            accountant.name);
    Output.print(
        spec.commandLine().getOut(),
        json.enabled,
        Output.fields("noiseMultiplier", plan.noiseMultiplier()),
        text);
    return 0;
  }

  /** z for a BLT over (T, B, K): the whole run is one Gaussian with the BLT's sensitivity. */
  private int planBlt(Flags flags) {
    if (samplingRate != null) {
      throw flags.fail(
          "--sampling-rate does not apply to blt, which claims no amplification: drop it");
    }
    if (maxParticipations == null) {
      throw flags.fail("--max-participations is required with --mechanism blt");
    }
    int b = minSep == null ? 1 : minSep;
    int m = buffers == null ? 3 : buffers;
    flags.atLeastOne("--min-sep", b);
    flags.atLeastOne("--max-participations", maxParticipations);
    if (m < 1 || m > BufferedToeplitz.MAX_BUFFERS) {
      throw flags.fail("--buffers must be in [1, " + BufferedToeplitz.MAX_BUFFERS + "], was " + m);
    }
    String name = accountant.name;
    if (!name.equals("pld") && !name.equals("rdp")) {
      throw flags.fail("--accountant must be pld or rdp with blt, was '" + name + "'");
    }
    BltPlan plan =
        BltPlan.optimized(new ParticipationSchema(rounds, b, maxParticipations), m, ErrorKind.MAX);
    double z =
        CorrelatedNoiseAccounting.noiseMultiplierFor(accountant.build(flags), targetEpsilon, delta);
    String text =
        String.format(
            "noise multiplier %s (epsilon %s at delta %s for the whole run of %d rounds, one"
                + " Gaussian mechanism; BLT theta %s omega %s, sensitivity %s with at most %d"
                + " contributions %d rounds apart; noise std per unit of clip norm %s;"
                + " accountant %s)",
            Text.number(z),
            Text.number(targetEpsilon),
            Text.number(delta),
            rounds,
            Arrays.toString(plan.strategy().theta()),
            Arrays.toString(plan.strategy().omega()),
            Text.number(plan.sensitivity()),
            maxParticipations,
            b,
            Text.number(z * plan.sensitivity()),
            name);
    Output.print(
        spec.commandLine().getOut(),
        json.enabled,
        Output.fields(
            "noiseMultiplier",
            z,
            "sensitivity",
            plan.sensitivity(),
            "theta",
            plan.strategy().theta(),
            "omega",
            plan.strategy().omega()),
        text);
    return 0;
  }

  /** The band count and z of least error for amplified banded MF (see {@link BandMfPlan}). */
  private int planBandMf(Flags flags) {
    if (samplingRate != null || minSep != null || maxParticipations != null || buffers != null) {
      throw flags.fail(
          "--sampling-rate, --min-sep, --max-participations and --buffers do not apply to bandmf,"
              + " which samples each group at m / floor(N / B): give --population and --cohort");
    }
    if (population == null || cohort == null) {
      throw flags.fail("--population and --cohort are required with --mechanism bandmf");
    }
    flags.atLeastOne("--cohort", cohort);
    if (population < cohort) {
      throw flags.fail("--population must be at least --cohort " + cohort + ", was " + population);
    }
    String name = accountant.name;
    if (!name.equals("pld") && !name.equals("rdp")) {
      throw flags.fail("--accountant must be pld or rdp with bandmf, was '" + name + "'");
    }
    BandMfPlan.Candidate best;
    try {
      best =
          BandMfPlan.plan(
                  population,
                  cohort,
                  rounds,
                  targetEpsilon,
                  delta,
                  accountant.build(flags),
                  ErrorKind.MEAN,
                  flags.momentumWorkload("--momentum", momentum),
                  bands,
                  BandedToeplitz.MAX_BANDS)
              .best();
    } catch (IllegalArgumentException e) {
      throw flags.fail("--bands/--target-epsilon: " + e.getMessage());
    }
    String text =
        String.format(
            "noise multiplier %s with %d bands (epsilon %s at delta %s: %d Gaussians sampled at q"
                + " %s, one per client in each %d rounds; mean error of the %s"
                + " %s per unit of clip norm; accountant %s)",
            Text.number(best.noiseMultiplier()),
            best.bands(),
            Text.number(targetEpsilon),
            Text.number(delta),
            best.participations(),
            Text.number(best.samplingRate()),
            best.bands(),
            momentum == 0 ? "average's prefix sums" : "models under momentum " + momentum,
            Text.number(best.averageError()),
            name);
    Output.print(
        spec.commandLine().getOut(),
        json.enabled,
        Output.fields(
            "noiseMultiplier", best.noiseMultiplier(),
            "bands", best.bands(),
            "samplingRate", best.samplingRate(),
            "participations", best.participations(),
            "error", best.averageError()),
        text);
    return 0;
  }
}
