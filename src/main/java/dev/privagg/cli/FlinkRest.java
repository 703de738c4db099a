package dev.privagg.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.io.KafkaAccess;
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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

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
                  + refusal(op.path("failure-cause").path("stack-trace").asText()));
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

  /** A stack frame line ("\tat pkg.Class.method(File.java:12)") or "\t... 7 more". */
  private static final Pattern FRAME =
      Pattern.compile("\\s+(at [\\w$.@/<>-]+\\(.*\\)|\\.\\.\\. \\d+ more)");

  /** "pkg.SomeException: message" (the message may span lines) or "pkg.SomeException" alone. */
  private static final Pattern HEADER =
      Pattern.compile("([A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*)+)(?:: (.*))?", Pattern.DOTALL);

  /** One exception of a printed stack trace: its header (all its lines) and where it was thrown. */
  private record Cause(String header, String thrownAt) {
    boolean byPrivagg() {
      return thrownAt.startsWith("at dev.privagg.");
    }
  }

  /**
   * What a failure the REST API relays says, whole: for a stack trace (Flink sends one for a job
   * whose main refused to start, wrapped in its own exceptions) the innermost cause, with every
   * line of its message (a refusal of misconfigured topics names each setting and its fix on a line
   * of its own) and no stack frames; privagg's own refusals without their exception class. A cause
   * privagg did not write that may quote the JAAS line (Kafka's parse errors do: a password) is
   * named by its kind only. Text that is no stack trace comes back as it is.
   */
  static String refusal(String text) {
    List<Cause> causes = new ArrayList<>();
    StringBuilder header = null;
    boolean inHeader = false;
    for (String line : text.strip().lines().toList()) {
      if (line.equals("<Exception on server side:")
          || line.equals("End of exception on server side>")) {
        continue;
      }
      boolean first = causes.isEmpty() && header == null;
      if (first || line.startsWith("Caused by: ")) {
        if (header != null) {
          causes.add(new Cause(header.toString().strip(), ""));
        }
        header = new StringBuilder(first ? line : line.substring("Caused by: ".length()));
        inHeader = true;
      } else if (inHeader && !FRAME.matcher(line).matches()) {
        header.append('\n').append(line);
      } else if (inHeader) {
        // The first frame says who threw it.
        causes.add(new Cause(header.toString().strip(), line.strip()));
        header = null;
        inHeader = false;
      }
    }
    if (header != null) {
      causes.add(new Cause(header.toString().strip(), ""));
    }
    if (causes.isEmpty()) {
      return text.strip();
    }
    Cause innermost = causes.get(causes.size() - 1);
    if (innermost.byPrivagg()) {
      Matcher m = HEADER.matcher(innermost.header());
      return m.matches() && m.group(2) != null ? m.group(2) : innermost.header();
    }
    // Privagg's messages never quote a secret; the causes below the last of them may.
    for (int i = causes.size() - 1; i >= 0 && !causes.get(i).byPrivagg(); i--) {
      if (KafkaAccess.mayQuoteJaas(causes.get(i).header())) {
        return KafkaAccess.UNPARSABLE_JAAS;
      }
    }
    return innermost.header();
  }

  /**
   * The refusal in an error answer of the REST API: each entry of its {@code errors} (Flink puts
   * "Internal server error." before the trace of an unexpected failure), or the body itself when it
   * has none.
   */
  static String refusalOf(String body) {
    JsonNode errors;
    try {
      errors = JSON.readTree(body).path("errors");
    } catch (IOException e) {
      errors = null;
    }
    if (errors == null || !errors.isArray() || errors.isEmpty()) {
      return refusal(body);
    }
    List<String> parts = new ArrayList<>();
    for (JsonNode error : errors) {
      parts.add(error.asText());
    }
    if (parts.size() > 1 && parts.get(0).equals("Internal server error.")) {
      parts.remove(0);
    }
    return parts.stream().map(FlinkRest::refusal).collect(Collectors.joining("\n"));
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
      throw new IllegalStateException(
          "Flink REST "
              + request.method()
              + " "
              + request.uri().getPath()
              + " answered "
              + response.statusCode()
              + ": "
              + refusalOf(response.body()));
    }
    return response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
  }
}
