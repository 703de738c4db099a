package dev.privagg.cli;

import dev.privagg.client.train.TrainingOptions;
import dev.privagg.optimizer.ServerOptimizer;
import dev.privagg.sim.EmbeddedKafka;
import dev.privagg.sim.Reports;
import dev.privagg.sim.Simulation;
import dev.privagg.sim.SimulationConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code privagg demo}: an in-process Kafka broker, the job on a local Flink MiniCluster, 100
 * simulated clients on Digits under client-level (epsilon, delta)-DP, then the same training
 * without privacy through the same pipeline, and a summary with a plot.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Train on Digits with 100 simulated clients, privately and not, and compare.",
      "Uses an in-process Kafka broker and the Flink job on a local MiniCluster (2-3 minutes)."
    })
final class DemoCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--epsilon",
      defaultValue = "4.0",
      description = "Client-level epsilon for the whole run (default 4).")
  double epsilon;

  @Option(names = "--rounds", defaultValue = "25", description = "Rounds (default 25).")
  int rounds;

  @Option(
      names = "--out",
      defaultValue = "demo-output",
      description = "Folder for the plot, CSV and JSON (default demo-output).")
  Path out;

  @Override
  public Integer call() throws Exception {
    PrintWriter w = spec.commandLine().getOut();
    Flags flags = new Flags(spec);
    flags.positive("--epsilon", epsilon);
    flags.atLeastOne("--rounds", rounds);
    SimulationConfig config =
        SimulationConfig.builder()
            .dataset("digits")
            .model("softmax")
            .hidden(0)
            .clients(100)
            .expectedClients(20)
            .sampling("server")
            .rounds(rounds)
            .partition("iid")
            .alpha(0.5)
            .targetEpsilon(epsilon)
            .delta(1e-5)
            .clipNorm(1.0)
            .serverOptimizer(ServerOptimizer.sgd(1.0))
            .training(TrainingOptions.sgd(2, 8, 0.5))
            .roundTimeoutMillis(1500)
            .noiseSource("secure")
            .seed(1)
            .build();
    w.printf(
        "privagg demo: 100 clients on Digits (8x8 handwritten digits), about 20 sampled per round by%n"
            + "the server (Poisson, q = 0.2), %d rounds, client-level (epsilon %s, delta 1e-5)-DP.%n",
        rounds, Text.number(epsilon));
    w.println("starting an in-process Kafka broker and a local Flink MiniCluster...");
    w.flush();
    Simulation.Result priv;
    Simulation.Result base;
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      w.println("private run:");
      priv = Simulation.run(config, kafka.connection(), r -> RoundProgress.print(w, r));
      w.println("non-private baseline (noise 0, same pipeline):");
      base =
          Simulation.run(config.nonPrivate(), kafka.connection(), r -> RoundProgress.print(w, r));
    }
    write(priv, base);
    w.println();
    w.printf(
        "summary: private    test accuracy %.4f at epsilon %s (delta 1e-5), noise multiplier %s, membership AUC %.3f%n",
        priv.finalAccuracy(),
        Text.number(priv.epsilon()),
        Text.number(priv.spec().privacy().noiseMultiplier()),
        priv.membershipAuc());
    w.printf(
        "         baseline   test accuracy %.4f without privacy, membership AUC %.3f%n",
        base.finalAccuracy(), base.membershipAuc());
    w.printf(
        "outputs: %s (accuracy-per-round.png, rounds.csv, summary.json)%n", out.toAbsolutePath());
    w.flush();
    return 0;
  }

  private void write(Simulation.Result priv, Simulation.Result base) throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    for (Simulation.Result r : List.of(priv, base)) {
      String run = r == priv ? "private" : "baseline";
      for (Simulation.RoundResult round : r.rounds()) {
        rows.add(List.of(run, round.round(), round.epsilon(), round.accuracy()));
      }
    }
    Reports.csv(
        out.resolve("rounds.csv"), List.of("run", "round", "epsilon", "testAccuracy"), rows);
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("privateAccuracy", priv.finalAccuracy());
    summary.put("epsilon", priv.epsilon());
    summary.put("delta", 1e-5);
    summary.put("noiseMultiplier", priv.spec().privacy().noiseMultiplier());
    summary.put("privateMembershipAuc", priv.membershipAuc());
    summary.put("baselineAccuracy", base.finalAccuracy());
    summary.put("baselineMembershipAuc", base.membershipAuc());
    Reports.json(out.resolve("summary.json"), summary);
    Reports.lineChart(
        out.resolve("accuracy-per-round.png"),
        "Digits, 100 clients: test accuracy per round",
        "round",
        "test accuracy",
        List.of(
            series("private, epsilon " + Text.number(priv.epsilon()), priv),
            series("non-private baseline", base)),
        0.0,
        1.0);
  }

  private static Reports.Series series(String name, Simulation.Result r) {
    double[] x = r.rounds().stream().mapToDouble(Simulation.RoundResult::round).toArray();
    double[] y = r.rounds().stream().mapToDouble(Simulation.RoundResult::accuracy).toArray();
    return new Reports.Series(name, x, y, null);
  }
}
