package dev.privagg.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The job's JVM ({@link BenchJobMain}), seen from outside: its CPU time and peak RSS from the OS,
 * its heap from its GC log, and its stage timers from Flink's REST API.
 */
final class JobProcess implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern GC_PAUSE = Pattern.compile("(\\d+)M->(\\d+)M\\((\\d+)M\\)");

  private final Process process;
  private final Path log;
  private final Path gcLog;
  private final int restPort;
  private final String flinkJobId;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private JobProcess(Process process, Path log, Path gcLog, int restPort, String flinkJobId) {
    this.process = process;
    this.log = log;
    this.gcLog = gcLog;
    this.restPort = restPort;
    this.flinkJobId = flinkJobId;
  }

  /** Starts the job's JVM and returns once Flink accepted the job. */
  static JobProcess start(
      Path spec,
      String bootstrapServers,
      long startMillis,
      Path workDir,
      String heap,
      BenchSetting setting,
      List<String> jvmOptions,
      boolean profile)
      throws IOException, InterruptedException {
    Files.createDirectories(workDir);
    int restPort = freePort();
    Path log = workDir.resolve("job.log");
    Path gcLog = workDir.resolve("gc.log");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xms" + heap);
    command.add("-Xmx" + heap);
    command.add("-Xlog:gc:file=" + gcLog);
    command.addAll(jvmOptions);
    if (profile) {
      command.add(
          "-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
              + workDir.resolve("job.jfr"));
    }
    String log4j = System.getProperty("log4j2.configurationFile");
    if (log4j != null) {
      command.add("-Dlog4j2.configurationFile=" + log4j);
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(BenchJobMain.class.getName());
    command.addAll(
        List.of(
            spec.toString(),
            bootstrapServers,
            Long.toString(startMillis),
            Integer.toString(restPort),
            workDir.resolve("checkpoints").toString(),
            Long.toString(setting.checkpointMillis()),
            Integer.toString(setting.parallelism()),
            setting.stateBackend().configName()));
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()))
            .start();
    long deadline = System.currentTimeMillis() + 120_000;
    while (System.currentTimeMillis() < deadline) {
      for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
        if (line.startsWith("flink-job ")) {
          return new JobProcess(process, log, gcLog, restPort, line.substring(10).trim());
        }
      }
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "the job's JVM exited with code " + process.exitValue() + "; see " + log);
      }
      Thread.sleep(200);
    }
    process.destroyForcibly();
    throw new IllegalStateException("the job did not start within 2 minutes; see " + log);
  }

  /** Fails if the job's JVM has died (a benchmark of a dead job would wait forever). */
  void checkAlive() {
    if (!process.isAlive()) {
      throw new IllegalStateException(
          "the job's JVM exited with code " + process.exitValue() + "; see " + log);
    }
  }

  /** CPU time (user + system) the job's JVM has used so far, in nanoseconds. */
  long cpuNanos() {
    return process.toHandle().info().totalCpuDuration().orElseThrow().toNanos();
  }

  /** Peak resident set size of the job's JVM so far (VmHWM), in bytes. */
  long peakRssBytes() throws IOException {
    for (String line :
        Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
      if (line.startsWith("VmHWM:")) {
        return 1024 * Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmHWM in /proc/" + process.pid() + "/status");
  }

  /** Heap peaks read from the GC log: used before any collection, and live after one. */
  record HeapPeaks(long usedMb, long liveMb) {}

  HeapPeaks heapPeaks() throws IOException {
    long used = 0;
    long live = 0;
    for (String line : Files.readAllLines(gcLog, StandardCharsets.UTF_8)) {
      Matcher m = GC_PAUSE.matcher(line);
      if (m.find()) {
        used = Math.max(used, Long.parseLong(m.group(1)));
        live = Math.max(live, Long.parseLong(m.group(2)));
      }
    }
    return new HeapPeaks(used, live);
  }

  /**
   * The stage counters once they stop moving (two reads half a second apart agree): the REST API
   * serves cached values, and the job is idle once the preloaded rounds are done.
   */
  Map<String, Long> settledStageNanos() throws IOException, InterruptedException {
    Map<String, Long> previous = stageNanos();
    for (int attempt = 0; attempt < 40; attempt++) {
      Thread.sleep(500);
      Map<String, Long> current = stageNanos();
      if (current.equals(previous) && !current.isEmpty()) {
        return current;
      }
      previous = current;
    }
    return previous;
  }

  /** Completed checkpoints triggered in a time window: how many, and the bytes they wrote. */
  record CheckpointBytes(
      int completed, int failed, int inProgress, long checkpointedBytes, long stateBytes) {}

  /**
   * The checkpoints triggered from {@code fromMillis} to {@code toMillis} (wall clock of this
   * machine, which the job's JobManager shares), from Flink's checkpoint statistics. {@code
   * checkpointedBytes} is what each checkpoint wrote (with incremental RocksDB, only the new
   * files); {@code stateBytes} the full state each one covers.
   */
  CheckpointBytes checkpointBytes(long fromMillis, long toMillis)
      throws IOException, InterruptedException {
    JsonNode stats = get("/jobs/" + flinkJobId + "/checkpoints");
    int completed = 0;
    int failed = 0;
    int inProgress = 0;
    long checkpointed = 0;
    long state = 0;
    for (JsonNode checkpoint : stats.path("history")) {
      long triggered = checkpoint.path("trigger_timestamp").asLong();
      if (triggered < fromMillis || triggered > toMillis) {
        continue;
      }
      switch (checkpoint.path("status").asText()) {
        case "COMPLETED" -> {
          completed++;
          checkpointed += checkpoint.path("checkpointed_size").asLong();
          state += checkpoint.path("state_size").asLong();
        }
        case "FAILED" -> failed++;
        default -> inProgress++; // its size is not known yet
      }
    }
    return new CheckpointBytes(completed, failed, inProgress, checkpointed, state);
  }

  /** The job's {@code privagg.stage.*Nanos} counters, summed over operators: stage to nanos. */
  private Map<String, Long> stageNanos() throws IOException, InterruptedException {
    Map<String, Long> stages = new HashMap<>();
    for (JsonNode vertex : get("/jobs/" + flinkJobId).get("vertices")) {
      String path = "/jobs/" + flinkJobId + "/vertices/" + vertex.get("id").asText() + "/metrics";
      List<String> ids = new ArrayList<>();
      for (JsonNode metric : get(path)) {
        String id = metric.get("id").asText();
        if (id.contains("privagg.stage.")) {
          ids.add(id);
        }
      }
      if (ids.isEmpty()) {
        continue;
      }
      for (JsonNode metric : get(path + "?get=" + String.join(",", ids))) {
        String id = metric.get("id").asText();
        String stage = id.substring(id.lastIndexOf('.') + 1).replace("Nanos", "");
        stages.merge(stage, Long.parseLong(metric.get("value").asText()), Long::sum);
      }
    }
    return stages;
  }

  private JsonNode get(String path) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create("http://localhost:" + restPort + path))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("GET " + path + " answered " + response.statusCode());
    }
    return JSON.readTree(response.body());
  }

  private static int freePort() throws IOException {
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy(); // SIGTERM: the JVM exits through its hooks and writes its JFR recording
    if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor();
    }
  }
}
