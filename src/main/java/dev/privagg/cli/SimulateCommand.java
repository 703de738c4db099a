package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import dev.privagg.sim.EmbeddedKafka;
import dev.privagg.sim.Simulation;
import dev.privagg.sim.SimulationConfig;
import java.io.PrintWriter;
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
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "An existing Kafka broker (default: start one in-process).")
  String bootstrapServers;

  @Mixin KafkaPropertiesOption kafkaProperties;

  @Mixin JsonOption json;

  @Override
  public Integer call() throws Exception {
    SimulationConfig config =
        options.config(
            new Flags(spec), noiseMultiplier == null ? Double.NaN : noiseMultiplier, targetEpsilon);
    PrintWriter out = spec.commandLine().getOut();
    if (json.enabled) {
      // stdout carries only JSON lines: one per round, then the summary.
      Simulation.Result result =
          Runner.simulate(
              config,
              kafka(),
              spec.commandLine().getErr(),
              r -> Output.line(out, Runner.roundFields(r)));
      Output.line(out, summaryFields(config, result));
      return 0;
    }
    Simulation.Result result = Runner.simulate(config, kafka(), out, r -> Runner.progress(out, r));
    out.printf(
        "final test accuracy %.4f, epsilon %s at delta %s, membership-inference AUC %.3f%s%n",
        result.finalAccuracy(),
        Text.number(result.epsilon()),
        Text.number(config.delta()),
        result.membershipAuc(),
        config.adaptiveClipping() == null
            ? ""
            : ", adaptive C from "
                + Text.number(config.clipNorm())
                + " to "
                + Text.number(result.finalClipNorm()));
    out.flush();
    return 0;
  }

  @Override
  public KafkaConnection kafka() {
    return bootstrapServers == null ? null : kafkaProperties.connect(bootstrapServers);
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
        "membershipAuc", Output.number(result.membershipAuc()));
  }

  /** Runs a simulation on a given or an embedded broker; {@code rounds} sees each round. */
  static final class Runner {
    private Runner() {}

    /**
     * @param log where the note about starting an in-process broker goes
     */
    static Simulation.Result simulate(
        SimulationConfig config,
        KafkaConnection broker,
        PrintWriter log,
        Consumer<Simulation.RoundResult> rounds)
        throws Exception {
      if (broker != null) {
        return Simulation.run(config, broker, rounds);
      }
      log.println("starting an in-process Kafka broker...");
      log.flush();
      try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
        return Simulation.run(config, kafka.connection(), rounds);
      }
    }

    /** A round as a JSON line's fields ({@code "type": "round"}). */
    static Map<String, Object> roundFields(Simulation.RoundResult r) {
      return Output.fields(
          "type", "round",
          "round", r.round(),
          "clientsSent", r.clientsSent(),
          "sentAfterDeadline", r.sentAfterDeadline(),
          "epsilon", Output.number(r.epsilon()),
          "accuracy", Output.number(r.accuracy()),
          "clipNorm", Output.number(r.clipNorm()),
          "millis", r.millis());
    }

    static void progress(PrintWriter out, Simulation.RoundResult r) {
      out.printf(
          "round %3d  clients sent %4d%s  epsilon %-9s test accuracy %.4f  (%.1f s)%n",
          r.round(),
          r.clientsSent(),
          r.sentAfterDeadline() ? " (late)" : "",
          Text.number(r.epsilon()),
          r.accuracy(),
          r.millis() / 1000.0);
      out.flush();
    }
  }
}
