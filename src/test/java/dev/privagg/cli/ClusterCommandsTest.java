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
        .isEqualTo("submitted [digits-softmax] as Flink job %s (%s)%n".formatted(FLINK_JOB, rest));
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
}
