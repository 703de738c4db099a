package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jobs}, {@code submit}, {@code savepoint} and {@code cancel} against a stand-in for Flink's
 * REST API (answers shaped as Flink 2.x documents them): with {@code --json} each prints one JSON
 * object a script can read; without it, the lines people read.
 */
class ClusterCommandsTest {
  private static final String FLINK_JOB = "a3d987ad51fcd0e4d32c6d4a5a4e1b7c";

  private final ObjectMapper json = new ObjectMapper();
  private final List<String> requests = new CopyOnWriteArrayList<>();

  /** Error answers, by "METHOD path": status and body, as Flink 2.2 answered them. */
  private final Map<String, Map.Entry<Integer, String>> refusals = new ConcurrentHashMap<>();

  private HttpServer server;
  private String rest;

  @BeforeEach
  void startFlinkRest() throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          String method = exchange.getRequestMethod();
          String path = exchange.getRequestURI().getPath();
          exchange.getRequestBody().readAllBytes();
          requests.add(method + " " + path);
          Map.Entry<Integer, String> refusal = refusals.get(method + " " + path);
          if (refusal != null) {
            byte[] bytes = refusal.getValue().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(refusal.getKey(), bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
            return;
          }
          String answer =
              switch (method + " " + path) {
                case "GET /jobs/overview" ->
                    """
                    {"jobs": [
                      {"jid": "%s", "name": "privagg digits-softmax", "state": "RUNNING",
                       "start-time": 1767225600000, "end-time": -1, "duration": 5000},
                      {"jid": "0f0e0d0c0b0a09080706050403020100", "name": "privagg old",
                       "state": "CANCELED", "start-time": 1767139200000, "end-time": 1767139260000,
                       "duration": 60000}]}
                    """
                        .formatted(FLINK_JOB);
                case "POST /jars/upload" ->
                    "{\"filename\": \"/tmp/flink-web/flink-web-upload/abc_privagg-job.jar\","
                        + " \"status\": \"success\"}";
                case "POST /jars/abc_privagg-job.jar/run" -> "{\"jobid\": \"" + FLINK_JOB + "\"}";
                case "PATCH /jobs/" + FLINK_JOB -> "";
                case "POST /jobs/" + FLINK_JOB + "/stop" -> "{\"request-id\": \"t-1\"}";
                case "GET /jobs/" + FLINK_JOB + "/savepoints/t-1" ->
                    "{\"status\": {\"id\": \"COMPLETED\"},"
                        + " \"operation\": {\"location\": \"file:/tmp/sp/savepoint-a3d987-1\"}}";
                default -> null;
              };
          byte[] bytes =
              (answer == null ? "{\"errors\": [\"Not found: " + path + "\"]}" : answer)
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          if (bytes.length == 0) {
            exchange.sendResponseHeaders(202, -1);
          } else {
            exchange.sendResponseHeaders(answer == null ? 404 : 200, bytes.length);
            exchange.getResponseBody().write(bytes);
          }
          exchange.close();
        });
    server.start();
    rest = "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @AfterEach
  void stopFlinkRest() {
    server.stop(0);
  }

  @Test
  void jobs_json_listsEveryJobWithItsState() throws Exception {
    CliTest.Run run = CliTest.run("jobs", "--rest", rest, "--json");
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out().lines()).hasSize(1);
    JsonNode jobs = json.readTree(run.out()).get("jobs");
    assertThat(jobs).hasSize(2);
    assertThat(jobs.get(0).get("flinkJobId").asText()).isEqualTo(FLINK_JOB);
    assertThat(jobs.get(0).get("state").asText()).isEqualTo("RUNNING");
    assertThat(jobs.get(0).get("name").asText()).isEqualTo("privagg digits-softmax");
    assertThat(jobs.get(0).get("startTime").asLong()).isEqualTo(1767225600000L);
    assertThat(jobs.get(1).get("state").asText()).isEqualTo("CANCELED");
  }

  @Test
  void jobs_text_isOneLinePerJob() {
    CliTest.Run run = CliTest.run("jobs", "--rest", rest);
    assertThat(run.out().lines())
        .containsExactly(
            FLINK_JOB + "  RUNNING    privagg digits-softmax",
            "0f0e0d0c0b0a09080706050403020100  CANCELED   privagg old");
  }

  @Test
  void submit_json_namesTheFlinkJobAndTheTrainingJobs(@TempDir Path dir) throws Exception {
    Path jar = Files.write(dir.resolve("privagg-job.jar"), new byte[] {'P', 'K'});
    CliTest.Run run =
        CliTest.run(
            "submit",
            "--spec",
            "jobs/digits-softmax.yaml",
            "--jar",
            jar.toString(),
            "--rest",
            rest,
            "--from-savepoint",
            "file:/tmp/sp/savepoint-1",
            "--json");
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode result = json.readTree(run.out());
    assertThat(result.get("flinkJobId").asText()).isEqualTo(FLINK_JOB);
    assertThat(result.get("jobIds")).hasSize(1);
    assertThat(result.get("jobIds").get(0).asText()).isEqualTo("digits-softmax");
    assertThat(result.get("fromSavepoint").asText()).isEqualTo("file:/tmp/sp/savepoint-1");
    assertThat(result.get("rest").asText()).isEqualTo(rest);
    assertThat(requests).containsExactly("POST /jars/upload", "POST /jars/abc_privagg-job.jar/run");
  }

  @Test
  void submit_text_saysWhatWasSubmitted(@TempDir Path dir) throws Exception {
    Path jar = Files.write(dir.resolve("privagg-job.jar"), new byte[] {'P', 'K'});
    CliTest.Run run =
        CliTest.run(
            "submit",
            "--spec",
            "jobs/digits-softmax.yaml",
            "--jar",
            jar.toString(),
            "--rest",
            rest);
    assertThat(run.out())
        .isEqualTo(
            ("submitted [digits-softmax] as Flink job %s (%s)%nhow long each job's budget lasts,"
                    + " and its rounds as they come: privagg status --spec FILE"
                    + " --bootstrap-servers localhost:9092 --follow%n")
                .formatted(FLINK_JOB, rest));
  }

  @Test
  void savepoint_json_givesTheLocation_andWhetherTheJobStopped() throws Exception {
    CliTest.Run run = CliTest.run("savepoint", FLINK_JOB, "--stop", "--rest", rest, "--json");
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode result = json.readTree(run.out());
    assertThat(result.get("flinkJobId").asText()).isEqualTo(FLINK_JOB);
    assertThat(result.get("location").asText()).isEqualTo("file:/tmp/sp/savepoint-a3d987-1");
    assertThat(result.get("stopped").asBoolean()).isTrue();
    assertThat(CliTest.run("savepoint", FLINK_JOB, "--stop", "--rest", rest).out())
        .isEqualTo("file:/tmp/sp/savepoint-a3d987-1" + System.lineSeparator());
  }

  @Test
  void cancel_json_confirmsTheCancelledJob() throws Exception {
    CliTest.Run run = CliTest.run("cancel", FLINK_JOB, "--rest", rest, "--json");
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode result = json.readTree(run.out());
    assertThat(result.get("flinkJobId").asText()).isEqualTo(FLINK_JOB);
    assertThat(result.get("cancelled").asBoolean()).isTrue();
    assertThat(requests).containsExactly("PATCH /jobs/" + FLINK_JOB);
    assertThat(CliTest.run("cancel", FLINK_JOB, "--rest", rest).out())
        .isEqualTo("cancelled " + FLINK_JOB + System.lineSeparator());
  }

  @Test
  void submit_refusedByTheJobsMain_printsEveryLineOfTheRefusal_andExits1(@TempDir Path dir)
      throws Exception {
    refusals.put(
        "POST /jars/abc_privagg-job.jar/run",
        Map.entry(400, FlinkRestErrorsTest.body("run-misconfigured-topics.json")));
    Path jar = Files.write(dir.resolve("privagg-job.jar"), new byte[] {'P', 'K'});
    String[] submit = {
      "submit", "--spec", "jobs/digits-softmax.yaml", "--jar", jar.toString(), "--rest", rest
    };
    CliTest.Run run = CliTest.run(submit);
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    List<String> lines = run.err().lines().toList();
    assertThat(lines)
        .hasSize(7)
        .first()
        .isEqualTo(
            "error: Flink REST POST /jars/abc_privagg-job.jar/run answered 400: refusing to start"
                + " on misconfigured topics:");
    assertThat(lines.get(1))
        .isEqualTo(
            "  topic privagg.updates has message.timestamp.type=CreateTime, needs LogAppendTime"
                + " set on the topic (round membership is the broker's append time; with"
                + " CreateTime clients set it); fix: kafka-configs.sh --bootstrap-server"
                + " localhost:19392 --alter --entity-type topics --entity-name privagg.updates"
                + " --add-config message.timestamp.type=LogAppendTime");
    assertThat(lines.get(4)).startsWith("  topic privagg.ledger has cleanup.policy=compact");
    assertThat(run.err()).doesNotContain("\tat ", "Caused by", "IllegalStateException");

    // --json: nothing on standard output, the same whole refusal on standard error.
    CliTest.Run json =
        CliTest.run(
            java.util.stream.Stream.concat(
                    java.util.Arrays.stream(submit), java.util.stream.Stream.of("--json"))
                .toArray(String[]::new));
    assertThat(json.exitCode()).isEqualTo(1);
    assertThat(json.out()).isEmpty();
    assertThat(json.err()).isEqualTo(run.err());
  }

  @Test
  void savepoint_andCancel_relayFlinksReason_notItsWrapper() throws Exception {
    refusals.put(
        "PATCH /jobs/" + FLINK_JOB,
        Map.entry(404, FlinkRestErrorsTest.body("cancel-unknown-job.json")));
    CliTest.Run cancel = CliTest.run("cancel", FLINK_JOB, "--rest", rest);
    assertThat(cancel.exitCode()).isEqualTo(1);
    assertThat(cancel.err())
        .isEqualTo(
            "error: Flink REST PATCH /jobs/%s answered 404:".formatted(FLINK_JOB)
                + " org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find"
                + " Flink job (0123456789abcdef0123456789abcdef)"
                + System.lineSeparator());

    refusals.put(
        "GET /jobs/" + FLINK_JOB + "/savepoints/t-1",
        Map.entry(200, FlinkRestErrorsTest.body("savepoint-unknown-job-status.json")));
    CliTest.Run savepoint = CliTest.run("savepoint", FLINK_JOB, "--stop", "--rest", rest);
    assertThat(savepoint.exitCode()).isEqualTo(1);
    assertThat(savepoint.err())
        .isEqualTo(
            "error: savepoint failed: org.apache.flink.runtime.messages.FlinkJobNotFoundException:"
                + " Could not find Flink job (0123456789abcdef0123456789abcdef)"
                + System.lineSeparator());
  }
}
