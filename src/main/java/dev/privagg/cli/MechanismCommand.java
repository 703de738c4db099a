package dev.privagg.cli;

import dev.privagg.correlated.BltPlan;
import dev.privagg.correlated.BufferedToeplitz;
import dev.privagg.correlated.ErrorKind;
import dev.privagg.correlated.ParticipationSchema;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.CorrelatedNoiseAccounting;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg mechanism}: calculators for noise mechanisms beyond independent noise. */
@Command(
    name = "mechanism",
    mixinStandardHelpOptions = true,
    description = "Calculators for correlated-noise mechanisms: blt and bandmf.",
    subcommands = {MechanismCommand.Blt.class, BandMfCommand.class})
final class MechanismCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /**
   * {@code privagg mechanism blt}: a buffered-linear-Toeplitz (BLT) matrix-factorization mechanism
   * for DP-FTRL, optimized for (or given as) theta and omega, with its sensitivity, error and, for
   * a target epsilon, the noise multiplier of the one Gaussian mechanism the whole run is.
   */
  @Command(
      name = "blt",
      mixinStandardHelpOptions = true,
      description = {
        "A BLT matrix-factorization mechanism (correlated noise) for N rounds where a client"
            + " participates at most K times, in rounds whose indices differ by at least B"
            + " (B = 1 allows every round).",
        "With --target-epsilon, the noise multiplier z of the whole run (one Gaussian mechanism"
            + " with sensitivity 1 after scaling by the BLT's sensitivity), compared with"
            + " independent noise in each round (K compositions, no amplification)."
      })
  static final class Blt implements Callable<Integer> {
    private static final int SHOWN_COEFFICIENTS = 6;

    @Spec CommandSpec spec;

    @Option(names = "--rounds", required = true, description = "Number of rounds N (>= 1).")
    long rounds;

    @Option(
        names = "--min-sep",
        required = true,
        description = "Least difference B of the round indices of two participations (>= 1).")
    int minSep;

    @Option(
        names = "--max-participations",
        required = true,
        description = "Most participations K of one client (>= 1).")
    int maxParticipations;

    @Option(
        names = "--buffers",
        description = "Buffers M of the optimized BLT (1..8); not with --theta.")
    Integer buffers;

    @Option(
        names = "--error",
        defaultValue = "max",
        description = "Error the optimizer minimizes: max (default) or mean squared error.")
    String error;

    @Option(
        names = "--theta",
        paramLabel = "A,B,...",
        description = "Explicit BLT decays, each in (0, 1), instead of optimizing.")
    String theta;

    @Option(
        names = "--omega",
        paramLabel = "A,B,...",
        description = "Explicit BLT output scales, each > 0 with sum <= 1; with --theta.")
    String omega;

    @Option(
        names = "--target-epsilon",
        description = "Epsilon budget (> 0) for the noise multiplier; needs --delta.")
    Double targetEpsilon;

    @Option(names = "--delta", description = "Target delta in (0, 1).")
    Double delta;

    @Option(
        names = "--accountant",
        defaultValue = "pld",
        description = "pld (default, tight for one Gaussian) or rdp.")
    String accountant;

    @Mixin JsonOption json;

    @Override
    public Integer call() {
      Flags flags = new Flags(spec);
      flags.atLeastOne("--rounds", rounds);
      flags.atLeastOne("--min-sep", minSep);
      flags.atLeastOne("--max-participations", maxParticipations);
      ErrorKind kind =
          switch (error) {
            case "max" -> ErrorKind.MAX;
            case "mean" -> ErrorKind.MEAN;
            default -> throw flags.fail("--error must be max or mean, was '" + error + "'");
          };
      ParticipationSchema schema = new ParticipationSchema(rounds, minSep, maxParticipations);
      BltPlan plan = plan(flags, schema, kind);
      Accountant acc = null;
      if (targetEpsilon != null || delta != null) {
        if (targetEpsilon == null || delta == null) {
          throw flags.fail("--target-epsilon and --delta must be given together");
        }
        flags.positive("--target-epsilon", targetEpsilon);
        flags.delta("--delta", delta);
        if (!accountant.equals("pld") && !accountant.equals("rdp")) {
          throw flags.fail("--accountant must be pld or rdp, was '" + accountant + "'");
        }
        acc = Accountant.named(accountant);
      }
      Map<String, Object> fields = fields(plan, kind);
      StringBuilder text = new StringBuilder(text(plan, kind));
      if (acc != null) {
        int k = schema.effectiveMaxParticipations();
        double z = CorrelatedNoiseAccounting.noiseMultiplierFor(acc, targetEpsilon, delta);
        // k unsampled Gaussians at z' compose to one at z' / sqrt(k) (Dong, Roth, Su 2022).
        double zIndependent = z * Math.sqrt(k);
        double bltStd = z * plan.sensitivity() * Math.sqrt(plan.maxError());
        double independentStd = zIndependent * Math.sqrt((double) rounds);
        fields.putAll(
            Output.fields(
                "targetEpsilon", Output.number(targetEpsilon),
                "delta", Output.number(delta),
                "accountant", accountant,
                "noiseMultiplier", Output.number(z),
                "noiseStd", Output.number(z * plan.sensitivity()),
                "maxModelNoiseStd", Output.number(bltStd),
                "independentNoiseMultiplier", Output.number(zIndependent),
                "independentMaxModelNoiseStd", Output.number(independentStd),
                "noiseStdRatio", Output.number(bltStd / independentStd)));
        text.append(
            String.format(
                Locale.ROOT,
                "%nfor epsilon %s at delta %s (accountant %s):%n"
                    + "  BLT: the run is one Gaussian mechanism, noise multiplier z %s, so each"
                    + " round draws N(0, (z sensitivity)^2) = std %s per unit of clip norm;%n"
                    + "       the model after the last round has noise std %s (z sensitivity"
                    + " sqrt(max error))%n"
                    + "  independent noise each round (%d compositions, no amplification):"
                    + " noise multiplier %s, model noise std %s (z sqrt(N))%n"
                    + "  ratio BLT / independent: %s",
                Text.number(targetEpsilon),
                Text.number(delta),
                accountant,
                Text.number(z),
                Text.number(z * plan.sensitivity()),
                Text.number(bltStd),
                k,
                Text.number(zIndependent),
                Text.number(independentStd),
                Text.number(bltStd / independentStd)));
      }
      Output.print(spec.commandLine().getOut(), json.enabled, fields, text.toString());
      return 0;
    }

    private BltPlan plan(Flags flags, ParticipationSchema schema, ErrorKind kind) {
      if ((theta == null) != (omega == null)) {
        throw flags.fail("--theta and --omega must be given together");
      }
      if (theta != null) {
        double[] t = list(flags, "--theta", theta);
        double[] w = list(flags, "--omega", omega);
        if (buffers != null && buffers != t.length) {
          throw flags.fail(
              "--buffers must match the " + t.length + " values of --theta, was " + buffers);
        }
        try {
          return BltPlan.of(schema, BufferedToeplitz.of(t, w));
        } catch (IllegalArgumentException e) {
          throw flags.fail("--theta/--omega: " + e.getMessage());
        }
      }
      if (buffers == null) {
        throw flags.fail("--buffers is required unless --theta and --omega are given");
      }
      if (!(buffers >= 1 && buffers <= BufferedToeplitz.MAX_BUFFERS)) {
        throw flags.fail(
            "--buffers must be in [1, " + BufferedToeplitz.MAX_BUFFERS + "], was " + buffers);
      }
      try {
        return BltPlan.optimized(schema, buffers, kind);
      } catch (IllegalArgumentException e) {
        throw flags.fail("--rounds: " + e.getMessage());
      }
    }

    private static double[] list(Flags flags, String flag, String value) {
      String[] parts = value.split(",");
      double[] out = new double[parts.length];
      for (int i = 0; i < parts.length; i++) {
        try {
          out[i] = Double.parseDouble(parts[i].trim());
        } catch (NumberFormatException e) {
          throw flags.fail(
              flag + " must be a comma-separated list of numbers, had '" + parts[i] + "'");
        }
      }
      return out;
    }

    private static Map<String, Object> fields(BltPlan plan, ErrorKind kind) {
      ParticipationSchema s = plan.schema();
      return Output.fields(
          "rounds", s.rounds(),
          "minSeparation", s.minSeparation(),
          "maxParticipations", s.maxParticipations(),
          "effectiveMaxParticipations", s.effectiveMaxParticipations(),
          "error", kind.name().toLowerCase(Locale.ROOT),
          "buffers", plan.strategy().buffers(),
          "theta", numbers(plan.strategy().theta()),
          "omega", numbers(plan.strategy().omega()),
          "pillutlaScore", Output.number(plan.strategy().pillutlaScore()),
          "inverseTheta", numbers(plan.inverse().theta()),
          "inverseOmega", numbers(plan.inverse().omega()),
          "coefficients", numbers(plan.strategy().toeplitzCoefficients(shown(s))),
          "inverseCoefficients", numbers(plan.inverse().toeplitzCoefficients(shown(s))),
          "sensitivity", Output.number(plan.sensitivity()),
          "maxError", Output.number(plan.maxError()),
          "meanError", Output.number(plan.meanError()),
          "rootMaxLoss", Output.number(plan.rootMaxLoss()),
          "optimalToeplitzBound", Output.number(plan.optimalToeplitzBound()));
    }

    private static String text(BltPlan plan, ErrorKind kind) {
      ParticipationSchema s = plan.schema();
      return String.format(
          Locale.ROOT,
          "schema: %d rounds, at most %d participations (%d possible), round indices of two"
              + " participations differ by >= %d (1 allows every round)%n"
              + "BLT C (%d buffers, optimized for %s error unless given):%n"
              + "  theta %s%n  omega %s%n  Pillutla score %s%n"
              + "inverse C^-1 (generates the noise):%n  theta %s%n  omega %s%n"
              + "coefficients of C:    %s ...%n"
              + "coefficients of C^-1: %s ...%n"
              + "sensitivity over all %d rounds: %s%n"
              + "squared error of the prefix sums (unit noise): max %s, mean %s%n"
              + "sqrt(max loss) = sensitivity sqrt(max error): %s; 1 + ln(N)/pi = %s (ratio %s)",
          s.rounds(),
          s.maxParticipations(),
          s.effectiveMaxParticipations(),
          s.minSeparation(),
          plan.strategy().buffers(),
          kind.name().toLowerCase(Locale.ROOT),
          join(plan.strategy().theta()),
          join(plan.strategy().omega()),
          Text.number(plan.strategy().pillutlaScore()),
          join(plan.inverse().theta()),
          join(plan.inverse().omega()),
          join(plan.strategy().toeplitzCoefficients(shown(s))),
          join(plan.inverse().toeplitzCoefficients(shown(s))),
          s.rounds(),
          Text.number(plan.sensitivity()),
          Text.number(plan.maxError()),
          Text.number(plan.meanError()),
          Text.number(plan.rootMaxLoss()),
          Text.number(plan.optimalToeplitzBound()),
          Text.number(plan.rootMaxLoss() / plan.optimalToeplitzBound()));
    }

    private static int shown(ParticipationSchema s) {
      return (int) Math.min(SHOWN_COEFFICIENTS, s.rounds());
    }

    private static List<Object> numbers(double[] values) {
      List<Object> out = new ArrayList<>();
      for (double v : values) {
        out.add(Output.number(v));
      }
      return out;
    }

    private static String join(double[] values) {
      return String.join(", ", Arrays.stream(values).mapToObj(Text::number).toArray(String[]::new));
    }
  }
}
