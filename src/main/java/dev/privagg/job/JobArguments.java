package dev.privagg.job;

import dev.privagg.io.KafkaConnection;
import dev.privagg.spec.InitFiles;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The Flink job's {@code main} arguments, as {@code privagg submit} and {@code flink run} pass
 * them: the specs (in order), the brokers, and the checkpoint interval. Wrong arguments are refused
 * here, before anything connects.
 */
@Command(name = "privagg-job", description = "The privagg Flink job on Kafka.")
final class JobArguments {
  private final List<String[]> specArgs = new ArrayList<>();
  private final List<String> initArgs = new ArrayList<>();
  private final Map<String, byte[]> sentInits = new HashMap<>();

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "The Kafka brokers (required).")
  private String bootstrap;

  @Option(
      names = "--kafka-properties",
      paramLabel = "FILE",
      description = "Kafka client properties for secured brokers.")
  private Path kafkaProperties;

  @Option(
      names = "--checkpoint-interval-ms",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Checkpoint interval; releases commit with checkpoints.")
  private long checkpointIntervalMillis;

  private JobArguments() {}

  @Option(names = "--spec", paramLabel = "FILE", description = "A job spec file (repeatable).")
  private void spec(String file) {
    specArgs.add(new String[] {"--spec", file});
  }

  @Option(
      names = "--spec-base64",
      paramLabel = "YAML",
      description = "A job spec's YAML in base64 (repeatable), as privagg submit sends it.")
  private void specBase64(String yaml) {
    specArgs.add(new String[] {"--spec-base64", yaml});
  }

  @Option(
      names = "--init-base64",
      paramLabel = "JOBID=SAFETENSORS",
      description = "A job's initial model in base64 safetensors (repeatable).")
  private void initBase64(String value) {
    initArgs.add(value);
  }

  /**
   * Parses {@code args} and reads the specs they name.
   *
   * @throws IllegalArgumentException naming the argument that is wrong and the usage
   */
  static JobArguments parse(String[] args) {
    JobArguments arguments = new JobArguments();
    // Repeated --spec, --spec-base64 and --init-base64 call their setters once each, in order;
    // a repeated single value keeps the last, as the job's arguments always have.
    CommandLine commandLine = new CommandLine(arguments).setOverwrittenOptionsAllowed(true);
    try {
      commandLine.parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(
          e.getMessage() + "; usage: " + commandLine.getUsageMessage().strip(), e);
    }
    for (String init : arguments.initArgs) {
      sentInit(arguments.sentInits, init);
    }
    if (arguments.specArgs.isEmpty() || arguments.bootstrap == null) {
      throw new IllegalArgumentException(
          "give --bootstrap-servers and at least one --spec FILE or --spec-base64 YAML; usage: "
              + commandLine.getUsageMessage().strip());
    }
    return arguments;
  }

  /** The specs, in the order given, checked together. */
  List<JobSpec> specs() {
    List<JobSpec> specs = readSpecs(specArgs, sentInits);
    JobSpecReader.checkTogether(specs);
    return specs;
  }

  KafkaConnection kafka() {
    return KafkaConnection.of(bootstrap, kafkaProperties);
  }

  long checkpointIntervalMillis() {
    return checkpointIntervalMillis;
  }

  /**
   * The specs of {@code --spec FILE} (its init file read beside it) and {@code --spec-base64 YAML}
   * arguments, in order. A base64 spec's init values come from {@code --init-base64
   * JOBID=SAFETENSORS} (sent by {@code privagg submit}, which read the file on its own machine),
   * else from its initFile relative to the working directory of this main().
   */
  static List<JobSpec> readSpecs(List<String[]> specArgs, Map<String, byte[]> sentInits) {
    List<JobSpec> specs = new ArrayList<>();
    InitFiles initFiles = InitFiles.sent(sentInits, InitFiles.relativeTo(Path.of("")));
    for (String[] arg : specArgs) {
      specs.add(
          arg[0].equals("--spec")
              ? JobSpecReader.read(Path.of(arg[1]))
              : JobSpecReader.parse(
                  "--spec-base64 #" + (specs.size() + 1), decode(arg[1]), initFiles));
    }
    for (String jobId : sentInits.keySet()) {
      if (specs.stream()
          .noneMatch(s -> s.jobId().equals(jobId) && s.model().init().equals("file"))) {
        throw new IllegalArgumentException(
            "--init-base64 sends an initial model for job "
                + jobId
                + ", which no spec given here starts from a file (model.init: file)");
      }
    }
    return specs;
  }

  private static void sentInit(Map<String, byte[]> sentInits, String value) {
    int eq = value.indexOf('=');
    if (eq < 1) {
      throw new IllegalArgumentException(
          "--init-base64 must be JOBID=BASE64 (a job's initial model as safetensors), was "
              + value.substring(0, Math.min(value.length(), 40)));
    }
    try {
      sentInits.put(
          value.substring(0, eq), java.util.Base64.getDecoder().decode(value.substring(eq + 1)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "--init-base64 " + value.substring(0, eq) + "=...: not base64 (" + e.getMessage() + ")");
    }
  }

  private static String decode(String base64) {
    return new String(
        java.util.Base64.getDecoder().decode(base64), java.nio.charset.StandardCharsets.UTF_8);
  }
}
