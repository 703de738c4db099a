package dev.privagg.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaConnection;
import dev.privagg.spec.JobSpec;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg produce}: send one client update read from a JSON file. */
@Command(
    name = "produce",
    mixinStandardHelpOptions = true,
    description = {
      "Send one client update for a round, read from a JSON file.",
      "File format:",
      "  {\"tensors\": {\"weights\": [...], \"bias\": [...]}}  (float values, row-major, per tensor)"
    })
final class ProduceCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @picocli.CommandLine.Mixin JobOptions job;

  @Option(
      names = "--round",
      required = true,
      description = "The announced round this update is for.")
  long round;

  @Option(names = "--client-id", required = true, description = "This client's id.")
  String clientId;

  @Option(
      names = "--file",
      required = true,
      paramLabel = "UPDATE.json",
      description = "The update.")
  Path file;

  @Override
  public Integer call() throws Exception {
    Flags flags = new Flags(spec);
    if (round < 1) {
      throw flags.fail("--round must be >= 1 (round 0 is the initial model), was " + round);
    }
    JobSpec jobSpec = job.read();
    JsonNode tensors = new ObjectMapper().readTree(file.toFile()).get("tensors");
    if (tensors == null || !tensors.isObject()) {
      throw flags.fail(
          "--file must hold {\"tensors\": {name: [values...]}}, " + file + " does not");
    }
    float[][] values = new float[jobSpec.model().tensors().size()][];
    for (int t = 0; t < values.length; t++) {
      JobSpec.TensorSpec want = jobSpec.model().tensors().get(t);
      JsonNode array = tensors.get(want.name());
      if (array == null || !array.isArray() || array.size() != want.size()) {
        throw flags.fail(
            "--file: tensor '" + want.name() + "' must be an array of " + want.size() + " numbers");
      }
      values[t] = new float[want.size()];
      for (int i = 0; i < values[t].length; i++) {
        values[t][i] = (float) array.get(i).asDouble();
      }
    }
    try (PrivaggClient client = job.client(jobSpec, true)) {
      client.send(round, clientId, values);
    }
    spec.commandLine()
        .getOut()
        .printf(
            "sent the update of %s for round %d of job %s to %s%n",
            clientId, round, jobSpec.jobId(), jobSpec.topics().updates());
    return 0;
  }

  @Override
  public KafkaConnection kafka() {
    return job.connection();
  }

  @Override
  public String attempt() {
    return "send an update";
  }
}
