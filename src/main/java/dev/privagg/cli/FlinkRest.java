package dev.privagg.cli;

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
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** The few calls of Flink's REST API that privagg needs: upload, run, list, cancel, savepoint. */
final class FlinkRest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final String base;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  FlinkRest(String base) {
    this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
  }

  /** POST /jars/upload (multipart field jarfile); returns the jar id. */
  String upload(Path jar) throws IOException, InterruptedException {
    String boundary = "privagg-" + UUID.randomUUID();
    byte[] head =
        ("--"
                + boundary
                + "\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\""
                + jar.getFileName()
                + "\"\r\nContent-Type: application/x-java-archive\r\n\r\n")
            .getBytes(StandardCharsets.UTF_8);
    byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8);
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(base + "/jars/upload"))
            .header("Content-Type", "multipart/form-data; boundary=" + boundary)
            .POST(
                HttpRequest.BodyPublishers.ofByteArrays(
                    List.of(head, Files.readAllBytes(jar), tail)))
            .build();
    String filename = call(request).get("filename").asText();
    return filename.substring(filename.lastIndexOf('/') + 1);
  }

  /** POST /jars/:id/run; returns the job id. */
  String run(String jarId, List<String> args, String savepoint)
      throws IOException, InterruptedException {
    Map<String, Object> body =
        savepoint == null
            ? Map.of("programArgsList", args)
            : Map.of(
                "programArgsList",
                args,
                "savepointPath",
                savepoint,
                "allowNonRestoredState",
                false);
    return call(post("/jars/" + jarId + "/run", body)).get("jobid").asText();
  }

  /** GET /jobs/overview. */
  JsonNode jobs() throws IOException, InterruptedException {
    return call(HttpRequest.newBuilder(URI.create(base + "/jobs/overview")).GET().build())
        .get("jobs");
  }

  /** PATCH /jobs/:id?mode=cancel. */
  void cancel(String jobId) throws IOException, InterruptedException {
    call(
        HttpRequest.newBuilder(URI.create(base + "/jobs/" + jobId + "?mode=cancel"))
            .method("PATCH", HttpRequest.BodyPublishers.noBody())
            .build());
  }

  /**
   * Takes a savepoint and polls until it completes; returns its location. With {@code stop} it is
   * Flink's stop-with-savepoint (POST /jobs/:id/stop, no drain): sources stop first, the final
   * checkpoint commits every pending release, and then the job finishes. Otherwise POST
   * /jobs/:id/savepoints and the job keeps running.
   */
  String savepoint(String jobId, String directory, boolean stop)
      throws IOException, InterruptedException {
    String trigger;
    if (stop) {
      Map<String, Object> body =
          directory == null
              ? Map.of("drain", false)
              : Map.of("drain", false, "targetDirectory", directory);
      trigger = call(post("/jobs/" + jobId + "/stop", body)).get("request-id").asText();
    } else {
      Map<String, Object> body =
          directory == null
              ? Map.of("cancel-job", false)
              : Map.of("cancel-job", false, "target-directory", directory);
      trigger = call(post("/jobs/" + jobId + "/savepoints", body)).get("request-id").asText();
    }
    for (int i = 0; i < 600; i++) {
      JsonNode status =
          call(
              HttpRequest.newBuilder(URI.create(base + "/jobs/" + jobId + "/savepoints/" + trigger))
                  .GET()
                  .build());
      if (status.path("status").path("id").asText().equals("COMPLETED")) {
        JsonNode op = status.path("operation");
        if (op.has("failure-cause")) {
          throw new IllegalStateException(
              "savepoint failed: "
                  + op.path("failure-cause")
                      .path("stack-trace")
                      .asText()
                      .lines()
                      .findFirst()
                      .orElse(""));
        }
        return op.path("location").asText();
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException(
        "savepoint of job " + jobId + " did not complete within 5 minutes");
  }

  private HttpRequest post(String path, Object body) throws IOException {
    return HttpRequest.newBuilder(URI.create(base + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
        .build();
  }

  /**
   * The innermost cause in a stack trace the REST API returned: for a job whose main refused to
   * start (a missing ACL, a bad spec) that is privagg's one-line message.
   */
  static java.util.Optional<String> rootCause(String trace) {
    return trace
        .lines()
        .map(String::strip)
        .filter(l -> l.startsWith("Caused by: "))
        .reduce((a, b) -> b)
        .map(l -> l.substring("Caused by: ".length()));
  }

  private JsonNode call(HttpRequest request) throws IOException, InterruptedException {
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (java.net.ConnectException e) {
      throw new IllegalStateException(
          "no Flink REST API at "
              + base
              + " (start one with deploy/local/privagg-local start, or pass --rest)");
    }
    if (response.statusCode() / 100 != 2) {
      JsonNode errors = JSON.readTree(response.body()).path("errors");
      String first =
          errors.isArray() && !errors.isEmpty()
              ? errors.get(errors.size() > 1 ? 1 : 0).asText()
              : response.body();
      throw new IllegalStateException(
          "Flink REST "
              + request.method()
              + " "
              + request.uri().getPath()
              + " answered "
              + response.statusCode()
              + ": "
              + rootCause(first)
                  .orElseGet(
                      () -> first.lines().limit(3).reduce((a, b) -> a + " | " + b).orElse("")));
    }
    return response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
  }
}
