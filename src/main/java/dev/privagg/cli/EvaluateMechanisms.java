package dev.privagg.cli;

import dev.privagg.sim.Evaluation;
import dev.privagg.sim.EvaluationReport;
import dev.privagg.sim.MechanismComparison;
import dev.privagg.sim.SimulationConfig;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code evaluate --mechanisms}: BLT-correlated noise, independent noise charged for k
 * participations, and amplified DP-FedAvg at one (epsilon, delta), the same rounds and cohort (see
 * {@link MechanismComparison}). Its flag, and the comparison it describes.
 */
final class EvaluateMechanisms {
  @Option(
      names = "--mechanisms",
      split = ",",
      paramLabel = "MECHANISM",
      description =
          "Compare noise mechanisms at --target-epsilon over --rounds with cohort m = --cohort:"
              + " blt (clients check in under --min-separation B and --max-participations K, the"
              + " job adds BLT-correlated noise; needs --noise-source seeded), independent-k (the"
              + " same check-ins, independent noise with the z whose K compositions spend the"
              + " target, as no client contributes more than K times) and poisson (client-side"
              + " Poisson sampling at m/clients, declared-client-poisson) and bandmf (amplified"
              + " banded MF: the job groups the clients, samples the round's group and adds"
              + " banded-correlated noise; bands and z planned for the target), e.g."
              + " blt,independent-k,poisson,bandmf. Writes mechanisms.csv, mechanisms.json and"
              + " mechanisms.png.")
  List<String> mechanisms;

  @Option(
      names = "--bands",
      paramLabel = "B",
      description =
          "With --mechanisms bandmf: use B bands (1 to clients / cohort) instead of the planned"
              + " count; z is planned for the target at B.")
  Integer bands;

  /** True when the command line asks for a comparison of mechanisms. */
  boolean requested() {
    return mechanisms != null;
  }

  /**
   * Checks the flags, plans every mechanism, runs them all, writes the files and prints the table
   * (or JSON summary).
   */
  int run(EvaluateCommand.Shared shared, double epsilon) throws Exception {
    Flags flags = shared.flags();
    refuseFlags(flags);
    List<String> names = names(flags);
    if (bands != null && !names.contains("bandmf")) {
      throw flags.fail("--bands fixes bandmf's band count: add bandmf to --mechanisms");
    }
    if (bands != null) {
      flags.atLeastOne("--bands", bands);
    }
    for (String correlated : List.of("blt", "bandmf")) {
      if (names.contains(correlated) && !"seeded".equals(shared.options().noiseSource)) {
        throw flags.fail(
            "--mechanisms "
                + correlated
                + ": the job takes keyed or seeded noise for it, and a simulation seeded: add"
                + " --noise-source seeded");
      }
    }
    SimulationConfig base = shared.options().checkInConfig(flags, epsilon);
    if (!shared.options().schemaGiven(flags)) {
      throw flags.fail(
          "--mechanisms compares under a participation schema: give --min-separation B and"
              + " --max-participations K (e.g. 25 and 12 for 6000 clients, cohort 200, 300"
              + " rounds)");
    }
    SimulationOptions.refuseShortSchedule(flags, base, shared.seeds());
    List<MechanismComparison.Mechanism> parsed = new ArrayList<>();
    for (String name : names) {
      try {
        parsed.add(MechanismComparison.of(name, base, bands == null ? 0 : bands));
      } catch (IllegalArgumentException e) {
        throw flags.fail("--mechanisms " + name + ": " + e.getMessage());
      }
    }
    // Every spec is planned before the broker starts: a target or spec the job refuses fails now.
    List<JobSpec> specs = new ArrayList<>();
    List<MechanismComparison.Mechanism> planned;
    try {
      planned = MechanismComparison.plan(parsed, specs);
    } catch (IllegalArgumentException e) {
      throw flags.fail("--mechanisms " + e.getMessage());
    }
    PrintWriter out = shared.console();
    if (!shared.json()) {
      printPlan(out, base, planned, specs, shared.seeds());
    }
    EvaluationConsole console =
        new EvaluationConsole(out, shared.json(), planned.size() * shared.seeds());
    List<Evaluation.Run> runs =
        shared
            .broker()
            .run(
                kafka ->
                    MechanismComparison.run(
                        planned, shared.seeds(), kafka, console::round, console::run));
    List<Evaluation.Setting> settings = Evaluation.summarise(runs);
    List<MechanismComparison.Row> rows = MechanismComparison.rows(planned, settings, runs);
    EvaluationReport.mechanisms(base, rows, settings, runs).writeTo(shared.outputFolder());
    if (shared.json()) {
      Output.line(
          out,
          Output.fields(
              "type", "summary",
              "dataset", base.dataset(),
              "model", base.model(),
              "clients", base.clients(),
              "expectedClients", base.expectedClients(),
              "rounds", base.rounds(),
              "minSeparation", base.minSeparation(),
              "maxParticipations", base.maxParticipations(),
              "targetEpsilon", base.targetEpsilon(),
              "delta", base.delta(),
              "mechanisms", rows,
              "outputs", shared.outputFolder().toAbsolutePath().toString()));
    } else {
      printTable(out, rows);
      console.closing(settings, shared.outputFolder());
    }
    return 0;
  }

  /** The mechanisms of --mechanisms, each known and named once. */
  private List<String> names(Flags flags) {
    List<String> names = new ArrayList<>();
    for (String text : mechanisms) {
      String name = text.trim();
      if (!MechanismComparison.NAMES.contains(name)) {
        throw flags.fail(
            "--mechanisms must name some of "
                + String.join(", ", MechanismComparison.NAMES)
                + ", had '"
                + name
                + "'");
      }
      if (names.contains(name)) {
        throw flags.fail("--mechanisms names " + name + " twice; give each once");
      }
      names.add(name);
    }
    return names;
  }

  /** Flags that each mechanism sets for itself, or that mean nothing here. */
  private static void refuseFlags(Flags flags) {
    for (String flag :
        List.of(
            "--variants",
            "--noise-multipliers",
            "--cohorts",
            "--central",
            "--sampling",
            "--adaptive-clipping",
            "--clip-lr",
            "--clip-count-noise")) {
      if (flags.given(flag)) {
        throw flags.fail(
            flag
                + " does not go with --mechanisms (each mechanism sets its own sampling; the BLT"
                + " job refuses adaptive clipping, so none of them clips adaptively): drop one of"
                + " them");
      }
    }
  }

  /** What will run: the setup, then each mechanism's z and noise std per round. */
  private static void printPlan(
      PrintWriter out,
      SimulationConfig base,
      List<MechanismComparison.Mechanism> planned,
      List<JobSpec> specs,
      int seeds) {
    out.printf(
        "comparing %d mechanisms at epsilon %s, delta %s over %d rounds, %d seed%s each (%s, %s,"
            + " %d clients, m = %d, schema B = %d, K = %d, accountant %s)%n",
        planned.size(),
        Text.number(base.targetEpsilon()),
        Text.number(base.delta()),
        base.rounds(),
        seeds,
        seeds == 1 ? "" : "s",
        base.dataset(),
        base.model(),
        base.clients(),
        base.expectedClients(),
        base.minSeparation(),
        base.maxParticipations(),
        MechanismComparison.ACCOUNTANT);
    for (int i = 0; i < planned.size(); i++) {
      MechanismComparison.Mechanism m = planned.get(i);
      JobSpec.Privacy p = specs.get(i).privacy();
      out.printf(
          "  %-14s z %.4f, noise std per round %.3g per coordinate, sampling %s%s%n",
          m.name(),
          m.noiseMultiplier(),
          m.noiseStdPerRound(),
          p.sampling().mode(),
          Double.isNaN(m.epsilonBound())
              ? ""
              : String.format(
                  ", epsilon %.3f for K = %d participations",
                  m.epsilonBound(), base.maxParticipations()));
    }
    out.flush();
  }

  /** Each mechanism's z, epsilon, accuracy and updates. */
  private static void printTable(PrintWriter out, List<MechanismComparison.Row> rows) {
    out.println();
    out.printf(
        "%-14s %-8s %-11s %-11s %-9s %-11s %-28s %-9s %-9s %-8s%n",
        "mechanism",
        "z",
        "noise/round",
        "model noise",
        "epsilon",
        "job epsilon",
        "accuracy (95% CI)",
        "sent",
        "used",
        "schema rejects");
    for (MechanismComparison.Row r : rows) {
      out.printf(
          "%-14s %-8s %-11s %-11s %-9s %-11s %.4f [%.4f, %.4f]     %-9.0f %-9.0f %-8.0f%n",
          r.mechanism(),
          String.format("%.4f", r.noiseMultiplier()),
          String.format("%.3g", r.noiseStdPerRound()),
          String.format("%.3g", r.modelNoiseStd()),
          String.format("%.3f", r.epsilon()),
          String.format("%.3f", r.jobEpsilon()),
          r.accuracy(),
          r.accuracyCi95Low(),
          r.accuracyCi95High(),
          r.updatesSent(),
          r.updatesUsed(),
          r.participationRejects());
    }
    out.println(
        "epsilon: the K-participation bound for independent-k, the job's own figure otherwise;"
            + " noise/round and model noise: per-coordinate std of a round's fresh Gaussian on the"
            + " average and of the noise on the model after the last round (FedAvg or FedAvgM"
            + " server); sent, used and rejects: per run, mean over seeds (rejects: PARTICIPATION_LIMIT and"
            + " TOO_SOON)");
  }
}
