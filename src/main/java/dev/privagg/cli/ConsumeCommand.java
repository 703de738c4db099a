package dev.privagg.cli;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.PrivacyStatement;
import dev.privagg.avro.Tensor;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaConnection;
import dev.privagg.spec.JobSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    description =
        "Print (or save as JSON, safetensors or npz) the released models of a job,"
            + " read_committed.")
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
      description = "Also write each model as DIR/round-N.json (or .safetensors, .npz).")
  Path saveDir;

  @Option(
      names = "--format",
      defaultValue = "json",
      paramLabel = "FORMAT",
      description =
          "File format of --save: json (default: tensors and privacy statement), safetensors"
              + " (float32, privacy statement as metadata) or npz (NumPy, tensors only).")
  String format;

  @Option(
      names = "--plot",
      paramLabel = "FILE.png",
      description =
          "A statistics job: draw the last release's histograms (with 95% error bars) and"
              + " quantiles (with intervals) to FILE.png.")
  Path plot;

  @picocli.CommandLine.Mixin JsonOption json;

  private GlobalModel lastStatistics;

  @Override
  public Integer call() throws Exception {
    SaveFormat saveFormat = saveFormat();
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
          Path file = saveDir == null ? null : saveFormat.write(m, saveDir);
          if (json.enabled) {
            printJson(out, m, file);
          } else {
            print(out, m);
            if (m.getStatistics() != null) {
              StatisticsTable.print(out, m.getStatistics());
            }
          }
          printed = r;
          if (m.getStatistics() != null) {
            lastStatistics = m;
          }
        }
      }
    }
    if (plot != null) {
      GlobalModel last = lastStatistics;
      if (last == null || !StatisticsPlot.write(plot, last.getRound(), last.getStatistics())) {
        spec.commandLine()
            .getErr()
            .println("--plot: no statistics release with a histogram or quantiles to draw");
      } else {
        spec.commandLine().getErr().println("plot of round " + last.getRound() + ": " + plot);
      }
    }
    if (printed < 0) {
      // With --json, stdout holds only model lines: nothing for no model.
      (json.enabled ? spec.commandLine().getErr() : out)
          .println(
              "no model of job " + jobSpec.jobId() + " on " + jobSpec.topics().models() + " yet");
    }
    out.flush();
    return 0;
  }

  private SaveFormat saveFormat() {
    try {
      return SaveFormat.valueOf(format.toUpperCase(java.util.Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new Flags(spec)
          .fail("--format must be one of json, safetensors, npz, was '" + format + "'");
    }
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

  /** One JSON line: round, privacy statement, tensor names and shapes, and the file written. */
  private static void printJson(PrintWriter out, GlobalModel m, Path file) {
    Map<String, Object> fields = Output.fields("jobId", m.getJobId(), "round", m.getRound());
    fields.putAll(SaveFormat.statement(m.getPrivacy()));
    List<Map<String, Object>> tensors = new ArrayList<>();
    for (Tensor t : m.getTensors()) {
      tensors.add(Output.fields("name", t.getName(), "shape", t.getShape()));
    }
    fields.put("tensors", tensors);
    if (m.getStatistics() != null) {
      fields.put("statistics", StatisticsTable.json(m.getStatistics()));
    }
    fields.put("file", file == null ? null : file.toString());
    Output.print(out, true, fields, null);
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
