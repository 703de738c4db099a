package dev.privagg.cli;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.PrivacyStatement;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaConnection;
import dev.privagg.sim.Reports;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg consume}: print or save a job's released models (read_committed). */
@Command(
    name = "consume",
    mixinStandardHelpOptions = true,
    description = "Print (or save as JSON) the released models of a job, read_committed.")
final class ConsumeCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @picocli.CommandLine.Mixin JobOptions job;

  @Option(
      names = "--until-round",
      description = "Wait for this round's model, then stop (default: print what is there).")
  Long untilRound;

  @Option(
      names = "--timeout-seconds",
      defaultValue = "60",
      description = "How long to wait (default 60).")
  long timeoutSeconds;

  @Option(
      names = "--save",
      paramLabel = "DIR",
      description = "Also write each model as DIR/round-N.json.")
  Path saveDir;

  @Override
  public Integer call() throws Exception {
    JobSpec jobSpec = job.read();
    PrintWriter out = spec.commandLine().getOut();
    long printed = -1;
    try (PrivaggClient client = job.client(jobSpec, false)) {
      if (untilRound != null) {
        client.awaitModel(untilRound, Duration.ofSeconds(timeoutSeconds));
      } else {
        long end = System.nanoTime() + Duration.ofSeconds(Math.min(timeoutSeconds, 5)).toNanos();
        while (System.nanoTime() < end) {
          client.poll(Duration.ofMillis(200));
        }
      }
      GlobalModel latest = client.latestModel();
      for (long r = 0; latest != null && r <= latest.getRound(); r++) {
        GlobalModel m = client.model(r);
        if (m != null) {
          print(out, m);
          save(m);
          printed = r;
        }
      }
    }
    if (printed < 0) {
      out.println(
          "no model of job " + jobSpec.jobId() + " on " + jobSpec.topics().models() + " yet");
    }
    out.flush();
    return 0;
  }

  private static void print(PrintWriter out, GlobalModel m) {
    PrivacyStatement p = m.getPrivacy();
    double sq = 0;
    for (double[] t : PrivaggClient.weights(m)) {
      for (double v : t) {
        sq += v * v;
      }
    }
    out.printf(
        "round %d: %d tensors, L2 norm %.4f; epsilon %s (delta %s, %s), z %s, C %s, q %s (%s), noise %s, %s%n",
        m.getRound(),
        m.getTensors().size(),
        Math.sqrt(sq),
        Text.number(p.getEpsilon()),
        Text.number(p.getDelta()),
        p.getAccountant(),
        Text.number(p.getNoiseMultiplier()),
        Text.number(p.getClipNorm()),
        Text.number(p.getSamplingRate()),
        p.getSamplingMode(),
        p.getNoiseSource(),
        p.getAdjacency());
  }

  private void save(GlobalModel m) throws Exception {
    if (saveDir == null) {
      return;
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("jobId", m.getJobId());
    json.put("round", m.getRound());
    Map<String, Object> tensors = new LinkedHashMap<>();
    double[][] weights = PrivaggClient.weights(m);
    for (int t = 0; t < weights.length; t++) {
      tensors.put(
          m.getTensors().get(t).getName(),
          Map.of("shape", m.getTensors().get(t).getShape(), "values", weights[t]));
    }
    json.put("tensors", tensors);
    PrivacyStatement p = m.getPrivacy();
    json.put(
        "privacy",
        Map.of(
            "epsilon",
            Output.number(p.getEpsilon()),
            "delta",
            p.getDelta(),
            "accountant",
            p.getAccountant(),
            "noiseMultiplier",
            p.getNoiseMultiplier(),
            "clipNorm",
            p.getClipNorm(),
            "samplingRate",
            p.getSamplingRate(),
            "samplingMode",
            p.getSamplingMode(),
            "noiseSource",
            p.getNoiseSource()));
    Reports.json(saveDir.resolve("round-" + m.getRound() + ".json"), json);
  }

  @Override
  public KafkaConnection kafka() {
    return job.connection();
  }

  @Override
  public String attempt() {
    return "read the released models";
  }
}
