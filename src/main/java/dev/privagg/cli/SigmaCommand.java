package dev.privagg.cli;

import dev.privagg.privacy.GaussianCalibration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg sigma}: Gaussian noise std for one (epsilon, delta) release. */
@Command(
    name = "sigma",
    mixinStandardHelpOptions = true,
    description = {
      "Gaussian noise std for one (epsilon, delta)-DP release.",
      "The release has L2 sensitivity S (--sensitivity).",
      "analytic: Balle and Wang 2018 (exact, default); classic: sqrt(2 ln(1.25/delta)) S / epsilon,"
          + " valid only for epsilon < 1."
    })
final class SigmaCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--epsilon", required = true, description = "Epsilon of the release (> 0).")
  double epsilon;

  @Option(names = "--delta", required = true, description = "Delta of the release in (0, 1).")
  double delta;

  @Option(
      names = "--sensitivity",
      defaultValue = "1",
      description = "L2 sensitivity (> 0, default 1).")
  double sensitivity;

  @Option(
      names = "--calibration",
      defaultValue = "analytic",
      description = "analytic (default) or classic.")
  String calibration;

  @Mixin JsonOption json;

  @Override
  public Integer call() {
    Flags flags = new Flags(spec);
    flags.positive("--epsilon", epsilon);
    flags.delta("--delta", delta);
    flags.positive("--sensitivity", sensitivity);
    GaussianCalibration.Method method =
        switch (calibration) {
          case "analytic" -> GaussianCalibration.Method.ANALYTIC;
          case "classic" -> GaussianCalibration.Method.CLASSIC;
          default ->
              throw flags.fail(
                  "--calibration must be analytic or classic, was '" + calibration + "'");
        };
    if (method == GaussianCalibration.Method.CLASSIC && !(epsilon < 1)) {
      throw flags.fail(
          "--epsilon must be < 1 with --calibration classic (the classic bound holds only for"
              + " epsilon < 1), was "
              + epsilon
              + "; use --calibration analytic (Balle and Wang 2018)");
    }
    double sigma = GaussianCalibration.sigma(method, epsilon, delta, sensitivity);
    String text =
        String.format(
            "sigma %s (%s calibration, epsilon %s, delta %s, sensitivity %s)",
            Text.number(sigma),
            calibration,
            Text.number(epsilon),
            Text.number(delta),
            Text.number(sensitivity));
    Output.print(spec.commandLine().getOut(), json.enabled, Output.fields("sigma", sigma), text);
    return 0;
  }
}
