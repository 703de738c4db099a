package dev.privagg.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privagg.io.KafkaConnection;
import dev.privagg.io.Safetensors;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Commands that drive a Flink session cluster over its REST API. */
final class ClusterCommands {
  private ClusterCommands() {}

  /** The {@code --rest} option. */
  static final class RestOption {
    @Option(
        names = "--rest",
        defaultValue = "http://localhost:8081",
        description = "Flink REST endpoint (default http://localhost:8081).")
    String url;
  }

  /** {@code privagg submit}. */
  @Command(
      name = "submit",
      mixinStandardHelpOptions = true,
      description = {
        "Validate the spec(s), upload the shaded job jar to a Flink session cluster and run it.",
        "The spec text (and a model.initFile's values) travel with the job, so neither need"
            + " exist on the cluster's machines."
      })
  static final class Submit implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(
        names = "--spec",
        required = true,
        paramLabel = "FILE",
        description = "Job spec (YAML); repeat for several jobs.")
    List<Path> specs;

    @Option(
        names = "--bootstrap-servers",
        defaultValue = "localhost:9092",
        description = "Kafka as the cluster reaches it (default localhost:9092).")
    String bootstrapServers;

    @Option(
        names = "--kafka-properties",
        paramLabel = "FILE",
        description =
            "Kafka client properties for secured brokers (security.protocol, sasl.*, ssl.*), a path"
                + " the JobManager can read: the job's main reads it there, so secrets never travel"
                + " in the job's arguments.")
    Path kafkaProperties;

    @Option(
        names = "--checkpoint-interval-ms",
        defaultValue = "1000",
        description =
            "Checkpoint interval; outputs become visible at each checkpoint (default 1000).")
    long checkpointIntervalMillis;

    @Option(
        names = "--from-savepoint",
        paramLabel = "PATH",
        description = "Start from this savepoint (upgrades).")
    String savepoint;

    @Option(
        names = "--jar",
        paramLabel = "JAR",
        description = "The job jar (default target/privagg-job.jar, built if missing).")
    Path jar;

    @picocli.CommandLine.Mixin RestOption rest;

    @picocli.CommandLine.Mixin JsonOption json;

    @Override
    public Integer call() throws Exception {
      List<JobSpec> jobs = JobSpecReader.readAll(specs);
      Path jobJar = jar != null ? jar : JobJar.ensure(spec.commandLine().getErr());
      PrintWriter out = spec.commandLine().getOut();
      List<String> args =
          new ArrayList<>(
              List.of(
                  "--bootstrap-servers",
                  bootstrapServers,
                  "--checkpoint-interval-ms",
                  Long.toString(checkpointIntervalMillis)));
      if (kafkaProperties != null) {
        // Checked here for a clear error before upload; read again where the main runs.
        KafkaConnection.of(bootstrapServers, kafkaProperties);
        args.add("--kafka-properties");
        args.add(kafkaProperties.toAbsolutePath().toString());
      }
      for (int i = 0; i < specs.size(); i++) {
        args.add("--spec-base64");
        args.add(
            Base64.getEncoder()
                .encodeToString(Files.readString(specs.get(i)).getBytes(StandardCharsets.UTF_8)));
        JobSpec job = jobs.get(i);
        if (job.model().initFile() != null) {
          // The init file is on this machine, not on the cluster's: send its checked values.
          args.add("--init-base64");
          args.add(
              job.jobId()
                  + "="
                  + Base64.getEncoder()
                      .encodeToString(Safetensors.encode(job.initialTensors(), Map.of())));
        }
      }
      FlinkRest flink = new FlinkRest(rest.url);
      String jarId = flink.upload(jobJar);
      String jobId = flink.run(jarId, args, savepoint);
      List<String> jobIds = jobs.stream().map(JobSpec::jobId).toList();
      Output.print(
          out,
          json.enabled,
          Output.fields(
              "flinkJobId", jobId, "jobIds", jobIds, "fromSavepoint", savepoint, "rest", rest.url),
          "submitted %s as Flink job %s%s (%s)"
                  .formatted(
                      jobIds,
                      jobId,
                      savepoint == null ? "" : " from savepoint " + savepoint,
                      rest.url)
              + System.lineSeparator()
              + "how long each job's budget lasts, and its rounds as they come: privagg status"
              + " --spec FILE --bootstrap-servers "
              + bootstrapServers
              + " --follow");
      return 0;
    }
  }

  /** {@code privagg jobs}. */
  @Command(
      name = "jobs",
      mixinStandardHelpOptions = true,
      description = "List the jobs of a Flink session cluster.")
  static final class Jobs implements Callable<Integer> {
    @Spec CommandSpec spec;

    @picocli.CommandLine.Mixin RestOption rest;

    @picocli.CommandLine.Mixin JsonOption json;

    @Override
    public Integer call() throws Exception {
      PrintWriter out = spec.commandLine().getOut();
      JsonNode jobs = new FlinkRest(rest.url).jobs();
      if (json.enabled) {
        List<Object> rows = new ArrayList<>();
        for (JsonNode job : jobs) {
          rows.add(
              Output.fields(
                  "flinkJobId", job.get("jid").asText(),
                  "state", job.get("state").asText(),
                  "name", job.get("name").asText(),
                  "startTime", job.path("start-time").asLong()));
        }
        Output.line(out, Output.fields("jobs", rows));
        return 0;
      }
      for (JsonNode job : jobs) {
        out.printf(
            "%s  %-10s %s%n",
            job.get("jid").asText(), job.get("state").asText(), job.get("name").asText());
      }
      out.flush();
      return 0;
    }
  }

  /** {@code privagg cancel}. */
  @Command(
      name = "cancel",
      mixinStandardHelpOptions = true,
      description = "Cancel a job (use privagg savepoint --stop to keep its state).")
  static final class Cancel implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Parameters(paramLabel = "JOB_ID", description = "The Flink job id (privagg jobs lists them).")
    String jobId;

    @picocli.CommandLine.Mixin RestOption rest;

    @picocli.CommandLine.Mixin JsonOption json;

    @Override
    public Integer call() throws Exception {
      new FlinkRest(rest.url).cancel(jobId);
      Output.print(
          spec.commandLine().getOut(),
          json.enabled,
          Output.fields("flinkJobId", jobId, "cancelled", true),
          "cancelled " + jobId);
      return 0;
    }
  }

  /** {@code privagg savepoint}. */
  @Command(
      name = "savepoint",
      mixinStandardHelpOptions = true,
      description = "Take a savepoint of a job (and optionally stop it) for an upgrade.")
  static final class Savepoint implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Parameters(paramLabel = "JOB_ID", description = "The Flink job id.")
    String jobId;

    @Option(
        names = "--dir",
        description = "Target directory (default: the cluster's savepoint directory).")
    String dir;

    @Option(
        names = {"--stop", "--cancel"},
        description =
            "Stop the job with this savepoint (Flink's stop-with-savepoint, no drain): every"
                + " pending release is committed first. --cancel is the older name.")
    boolean stop;

    @picocli.CommandLine.Mixin RestOption rest;

    @picocli.CommandLine.Mixin JsonOption json;

    @Override
    public Integer call() throws Exception {
      String location = new FlinkRest(rest.url).savepoint(jobId, dir, stop);
      Output.print(
          spec.commandLine().getOut(),
          json.enabled,
          Output.fields("flinkJobId", jobId, "location", location, "stopped", stop),
          location);
      return 0;
    }
  }

  /** Finds the shaded job jar, building it when it is missing or older than the sources. */
  static final class JobJar {
    private JobJar() {}

    static Path ensure(PrintWriter err) throws Exception {
      Path root = Path.of(System.getProperty("privagg.home", "."));
      Path jar = root.resolve("target/privagg-job.jar");
      if (!Files.exists(jar)
          || newer(root.resolve("src/main"), Files.getLastModifiedTime(jar).toMillis())) {
        err.println("privagg: building the job jar (mvn -DskipTests package)...");
        err.flush();
        Process build =
            new ProcessBuilder("mvn", "-q", "-B", "-DskipTests", "package")
                .directory(root.toFile())
                .redirectErrorStream(true)
                .redirectOutput(root.resolve("target/job-jar-build.log").toFile())
                .start();
        if (build.waitFor() != 0 || !Files.exists(jar)) {
          throw new IllegalStateException(
              "building the job jar failed; see " + root.resolve("target/job-jar-build.log"));
        }
      }
      return jar;
    }

    private static boolean newer(Path dir, long than) throws Exception {
      try (var files = Files.walk(dir)) {
        return files.anyMatch(
            p -> {
              try {
                return Files.getLastModifiedTime(p).toMillis() > than;
              } catch (java.io.IOException e) {
                return true;
              }
            });
      }
    }
  }
}
