package dev.privagg.job;

import dev.privagg.cli.CliTestAccess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The deploy/local broker and Flink session cluster on test ports (by default Kafka 19092/19093,
 * Flink REST 18081, RPC 16123), driven the way an operator drives it: privagg-local to start and
 * stop processes, the privagg CLI to submit, cancel and take savepoints, SIGKILL for crashes.
 */
final class LocalCluster implements AutoCloseable {
  static final String KAFKA = "localhost:19092";
  static final String REST = "http://localhost:18081";
  private static final Pattern SUBMITTED = Pattern.compile("as Flink job ([0-9a-f]{32})");

  private final Path state;
  private final int kafkaPort;
  private final int restPort;
  private final int rpcPort;

  /** On the default test ports ({@link #KAFKA}, {@link #REST}). */
  LocalCluster(Path state) {
    this(state, 19092, 18081, 16123);
  }

  /** On ports of its own: Kafka (its controller on the next port), Flink REST and RPC. */
  LocalCluster(Path state, int kafkaPort, int restPort, int rpcPort) {
    this.state = state;
    this.kafkaPort = kafkaPort;
    this.restPort = restPort;
    this.rpcPort = rpcPort;
  }

  /** The broker's bootstrap servers. */
  String kafka() {
    return "localhost:" + kafkaPort;
  }

  /** Flink's REST endpoint. */
  String rest() {
    return "http://localhost:" + restPort;
  }

  Path logs() {
    return state.resolve("flink/logs");
  }

  /** Starts the broker, the JobManager and a TaskManager (each only if not yet running). */
  void start() throws Exception {
    local("start");
  }

  /** Starts the broker and, meanwhile, the JobManager and a TaskManager. */
  void startInParallel() throws Exception {
    java.util.concurrent.CompletableFuture<Void> kafka =
        java.util.concurrent.CompletableFuture.runAsync(
            () -> {
              try {
                local("start", "kafka");
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    local("start", "flink");
    kafka.get();
  }

  /** Stops every process of the cluster; safe to call when some are already gone. */
  @Override
  public void close() throws Exception {
    local("stop");
  }

  /** SIGKILLs the TaskManager and starts a new one, as a supervisor would. */
  void killTaskManager() throws Exception {
    kill("flink/tm.pid");
    local("start", "taskmanager");
  }

  /**
   * SIGKILLs the JobManager. Without high availability its jobs die with it; the TaskManager
   * survives and registers with the next JobManager.
   */
  void killJobManager() throws Exception {
    kill("flink/jm.pid");
  }

  /** {@code privagg-local start flink}: a new JobManager (and a TaskManager if none is running). */
  void startFlink() throws Exception {
    local("start", "flink");
  }

  /** {@code privagg submit}; returns the Flink job id. */
  String submit(List<Path> specs, long checkpointMillis, String fromSavepoint) {
    List<String> args = new ArrayList<>(List.of("submit"));
    for (Path spec : specs) {
      args.addAll(List.of("--spec", spec.toString()));
    }
    args.addAll(
        List.of(
            "--bootstrap-servers",
            kafka(),
            "--rest",
            rest(),
            "--jar",
            Path.of("target/privagg-job.jar").toAbsolutePath().toString(),
            "--checkpoint-interval-ms",
            Long.toString(checkpointMillis)));
    if (fromSavepoint != null) {
      args.addAll(List.of("--from-savepoint", fromSavepoint));
    }
    String out = CliTestAccess.run(args.toArray(String[]::new));
    Matcher m = SUBMITTED.matcher(out);
    if (!m.find()) {
      throw new IllegalStateException("privagg submit printed no Flink job id: " + out);
    }
    return m.group(1);
  }

  /** {@code privagg cancel}, then waits until the cluster reports the job CANCELED. */
  void cancel(String flinkJob) throws Exception {
    CliTestAccess.run("cancel", flinkJob, "--rest", rest());
    awaitState(flinkJob, "CANCELED", Duration.ofSeconds(90));
  }

  /** {@code privagg savepoint [--stop]}; returns the savepoint's location. */
  String savepoint(String flinkJob, boolean stop) throws Exception {
    List<String> args = new ArrayList<>(List.of("savepoint", flinkJob, "--rest", rest()));
    if (stop) {
      args.add("--stop");
    }
    String location = CliTestAccess.run(args.toArray(String[]::new)).trim();
    if (stop) {
      awaitState(flinkJob, "FINISHED", Duration.ofSeconds(90));
    }
    return location;
  }

  /** Waits until {@code privagg jobs} lists the job in {@code wanted} state. */
  void awaitState(String flinkJob, String wanted, Duration timeout) throws Exception {
    long end = System.currentTimeMillis() + timeout.toMillis();
    String last = "";
    while (System.currentTimeMillis() < end) {
      last =
          CliTestAccess.run("jobs", "--rest", rest())
              .lines()
              .filter(l -> l.startsWith(flinkJob))
              .findFirst()
              .orElse("");
      if (last.contains(" " + wanted + " ")) {
        return;
      }
      Thread.sleep(500);
    }
    throw new AssertionError(
        "Flink job " + flinkJob + " not " + wanted + " within " + timeout + ": " + last);
  }

  /** A job's exception history as the Flink REST API gives it (JSON text). */
  String exceptions(String flinkJob) throws Exception {
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    return http.send(
            java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create(rest() + "/jobs/" + flinkJob + "/exceptions"))
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /**
   * The newest completed checkpoint a job left behind (a directory chk-N holding _metadata; a
   * checkpoint still being written has none). privagg has no command for this yet: an operator
   * lists the checkpoint directory by hand.
   */
  Path latestRetainedCheckpoint(String flinkJob) throws Exception {
    Path dir = state.resolve("flink/checkpoints").resolve(flinkJob);
    try (Stream<Path> chks = Files.list(dir)) {
      Optional<Path> latest =
          chks.filter(p -> p.getFileName().toString().startsWith("chk-"))
              .filter(p -> Files.exists(p.resolve("_metadata")))
              .max(
                  Comparator.comparingLong(
                      p -> Long.parseLong(p.getFileName().toString().substring(4))));
      return latest.orElseThrow(
          () -> new AssertionError("no completed checkpoint of job " + flinkJob + " in " + dir));
    }
  }

  private void kill(String pidFile) throws Exception {
    long pid = Long.parseLong(Files.readString(state.resolve(pidFile)).trim());
    Optional<ProcessHandle> process = ProcessHandle.of(pid);
    if (process.isEmpty()) {
      throw new IllegalStateException("no process " + pid + " (" + pidFile + ")");
    }
    process.get().destroyForcibly(); // SIGKILL
    process.get().onExit().get();
  }

  private void local(String... args) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of("bash", Path.of("deploy/local/privagg-local").toAbsolutePath().toString()));
    command.addAll(List.of(args));
    Files.createDirectories(state);
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(state.resolve("privagg-local.log").toFile()));
    pb.environment()
        .putAll(
            Map.of(
                "PRIVAGG_LOCAL_STATE",
                state.toString(),
                "KAFKA_PORT",
                Integer.toString(kafkaPort),
                "KAFKA_CONTROLLER_PORT",
                Integer.toString(kafkaPort + 1),
                "FLINK_REST_PORT",
                Integer.toString(restPort),
                "FLINK_RPC_PORT",
                Integer.toString(rpcPort)));
    int code = pb.start().waitFor();
    if (code != 0) {
      throw new IllegalStateException(
          "privagg-local "
              + String.join(" ", args)
              + " exited "
              + code
              + "; see "
              + state.resolve("privagg-local.log"));
    }
  }
}
