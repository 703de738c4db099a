package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import dev.privagg.sim.AuditPlot;
import dev.privagg.sim.Simulation;
import dev.privagg.sim.SimulationConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg simulate}: federated training of simulated clients through the real pipeline. */
@Command(
    name = "simulate",
    mixinStandardHelpOptions = true,
    description = {
      "Train a model with simulated clients through a real Kafka broker and the Flink job.",
      "Without --bootstrap-servers an in-process broker is started and stopped again."
    })
final class SimulateCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @Mixin SimulationOptions options;

  @Option(
      names = "--noise-multiplier",
      description = "Server noise multiplier z (0 = non-private baseline).")
  Double noiseMultiplier;

  @Option(
      names = "--target-epsilon",
      defaultValue = "4.0",
      description =
          "Plan z for this epsilon over --rounds when --noise-multiplier is not given (default 4).")
  double targetEpsilon;

  @Option(
      names = "--mechanism",
      defaultValue = "independent",
      description =
          "independent: a fresh Gaussian each round. blt: BLT-correlated noise planned for --rounds"
              + " (DP-FTRL, the whole run one Gaussian mechanism); needs --sampling checkin with"
              + " --min-separation and --max-participations, and --noise-source seeded."
              + " distributed-discrete-gaussian: the clients add discrete Gaussian shares under"
              + " secure aggregation; needs --aggregation secure and no Poisson sampling. bandmf:"
              + " amplified banded MF, the job groups the clients and samples the round's group;"
              + " needs --sampling server, --noise-source seeded and --target-epsilon (default"
              + " independent).")
  String mechanism;

  @Option(
      names = "--bands",
      paramLabel = "B",
      description =
          "With --mechanism bandmf: use B bands (1 to clients / cohort) instead of the planned"
              + " count; z is planned for the target at B.")
  Integer bands;

  @Option(
      names = "--bits",
      defaultValue = "18",
      description =
          "With --mechanism distributed-discrete-gaussian: bits per masked coordinate, 8 to 32"
              + " (default 18).")
  int bits;

  @Option(
      names = "--audit-plot",
      paramLabel = "FILE.png",
      description =
          "With --canaries: draw the inserted and unseen canaries' scores with their fitted"
              + " Gaussians and the f-DP bound's threshold, one panel per score.")
  Path auditPlot;

  @Mixin SimulationBrokerOptions broker;

  @Mixin JsonOption json;

  @Override
  public Integer call() throws Exception {
    SimulationConfig config =
        options.config(
            new Flags(spec), noiseMultiplier == null ? Double.NaN : noiseMultiplier, targetEpsilon);
    if (!SimulationConfig.MECHANISMS.contains(mechanism)) {
      throw new Flags(spec)
          .fail(
              "--mechanism must be independent, blt, bandmf or distributed-discrete-gaussian, was '"
                  + mechanism
                  + "'");
    }
    if (mechanism.equals("distributed-discrete-gaussian")) {
      if (!config.secureAggregation()) {
        throw new Flags(spec)
            .fail(
                "--mechanism distributed-discrete-gaussian: the clients add their noise before"
                    + " masking; add --aggregation secure");
      }
      try {
        config = config.toBuilder().mechanism(mechanism).bitsPerCoordinate(bits).build();
      } catch (IllegalArgumentException e) {
        throw new Flags(spec).fail("--mechanism distributed-discrete-gaussian: " + e.getMessage());
      }
    }
    if (mechanism.equals("blt")) {
      if (!config.checkInSampling()) {
        throw new Flags(spec)
            .fail(
                "--mechanism blt: the job takes no sampled rounds; add --sampling checkin with"
                    + " --min-separation and --max-participations");
      }
      if (!config.noiseSource().equals("seeded")) {
        throw new Flags(spec)
            .fail(
                "--mechanism blt: the BLT job takes keyed or seeded noise, and a simulation seeded:"
                    + " add --noise-source seeded");
      }
      config = config.toBuilder().mechanism("blt").build();
    }
    if (bands != null && !mechanism.equals("bandmf")) {
      throw new Flags(spec).fail("--bands fixes bandmf's band count: add --mechanism bandmf");
    }
    if (mechanism.equals("bandmf")) {
      if (bands != null) {
        new Flags(spec).atLeastOne("--bands", bands);
      }
      try {
        config = config.toBuilder().mechanism("bandmf").bands(bands == null ? 0 : bands).build();
      } catch (IllegalArgumentException e) {
        throw new Flags(spec)
            .fail(
                "--mechanism bandmf: "
                    + e.getMessage()
                    + " (give --sampling server, --noise-source seeded and --target-epsilon)");
      }
    }
    if (auditPlot != null && config.canaries() == 0) {
      throw new Flags(spec).fail("--audit-plot draws the canaries' audit: add --canaries K");
    }
    // The spec is read as the job will read it before any broker starts: a refusal comes now.
    Simulation.plannedSpec(config);
    PrintWriter out = spec.commandLine().getOut();
    if (json.enabled) {
      // stdout carries only JSON lines: one per round, then the summary.
      Simulation.Result result =
          simulate(
              config, spec.commandLine().getErr(), r -> Output.line(out, RoundProgress.fields(r)));
      if (auditPlot != null) {
        AuditPlot.save(auditPlot, result.audit());
      }
      Output.line(out, summaryFields(config, result));
      return 0;
    }
    Simulation.Result result = simulate(config, out, r -> RoundProgress.print(out, r));
    if (auditPlot != null) {
      AuditPlot.save(auditPlot, result.audit());
    }
    out.printf(
        "final test accuracy %.4f, epsilon %s at delta %s, membership-inference AUC %.3f%s;"
            + " updates sent %d, used %d%s%n",
        result.finalAccuracy(),
        Text.number(result.epsilon()),
        Text.number(config.delta()),
        result.membershipAuc(),
        config.adaptiveClipping() == null
            ? ""
            : ", adaptive C from "
                + Text.number(config.clipNorm())
                + " to "
                + Text.number(result.finalClipNorm()),
        result.updatesSent(),
        result.updatesUsed(),
        config.checkInSampling()
            ? ", rejected for the participation schema " + result.participationRejects()
            : "");
    if (result.audit() != null) {
      AuditOutput.print(out, result.audit());
    }
    out.flush();
    return 0;
  }

  /**
   * Runs {@code config}; {@code rounds} sees each round.
   *
   * @param log where the note about starting an in-process broker goes
   */
  private Simulation.Result simulate(
      SimulationConfig config, PrintWriter log, Consumer<Simulation.RoundResult> rounds)
      throws Exception {
    if (broker.inProcess()) {
      log.println("starting an in-process Kafka broker...");
      log.flush();
    }
    return broker.run(kafka -> Simulation.run(config, kafka, rounds));
  }

  @Override
  public KafkaConnection kafka() {
    return broker.connection();
  }

  @Override
  public String attempt() {
    return "run the simulation";
  }

  private static Map<String, Object> summaryFields(
      SimulationConfig config, Simulation.Result result) {
    return Output.fields(
        "type", "summary",
        "jobId", result.spec().jobId(),
        "dataset", config.dataset(),
        "model", config.model(),
        "clients", config.clients(),
        "expectedClients", config.expectedClients(),
        "sampling", config.sampling(),
        "rounds", result.rounds().size(),
        "noiseMultiplier", Output.number(result.spec().privacy().noiseMultiplier()),
        "serverOptimizer", config.serverOptimizer().kind().specName(),
        "serverLearningRate", config.serverOptimizer().learningRate(),
        "adaptiveClipping", config.adaptiveClipping() != null,
        "finalClipNorm", Output.number(result.finalClipNorm()),
        "delta", config.delta(),
        "epsilon", Output.number(result.epsilon()),
        "finalAccuracy", Output.number(result.finalAccuracy()),
        "testSize", result.testSize(),
        "membershipAuc", Output.number(result.membershipAuc()),
        "updatesSent", result.updatesSent(),
        "updatesUsed", result.updatesUsed(),
        "rejects", result.rejects(),
        "audit", result.audit() == null ? null : AuditOutput.fields(result.audit(), false));
  }
}
