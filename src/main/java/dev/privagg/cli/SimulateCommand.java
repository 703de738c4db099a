package dev.privagg.cli;

import dev.privagg.io.KafkaConnection;
import dev.privagg.sim.EmbeddedKafka;
import dev.privagg.sim.Simulation;
import dev.privagg.sim.SimulationConfig;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
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

  @Override
  public Integer call() throws Exception {
    SimulationConfig config =
        options.config(noiseMultiplier == null ? Double.NaN : noiseMultiplier, targetEpsilon);
    PrintWriter out = spec.commandLine().getOut();
    Simulation.Result result = Runner.simulate(config, kafka(), out);
    out.printf(
        "final test accuracy %.4f, epsilon %s at delta %s, membership-inference AUC %.3f%n",
        result.finalAccuracy(),
        Text.number(result.epsilon()),
        Text.number(config.delta()),
        result.membershipAuc());
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

  /** Runs a simulation on a given or an embedded broker, printing one line per round. */
  static final class Runner {
    private Runner() {}

    static Simulation.Result simulate(
        SimulationConfig config, KafkaConnection broker, PrintWriter out) throws Exception {
      if (broker != null) {
        return Simulation.run(config, broker, r -> progress(out, r));
      }
      out.println("starting an in-process Kafka broker...");
      out.flush();
      try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
        return Simulation.run(config, kafka.connection(), r -> progress(out, r));
      }
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
