package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The savepoint calls against a stand-in for Flink's REST API (paths and bodies as Flink 2.x
 * documents them): stopping uses stop-with-savepoint without drain, never cancel-with-savepoint.
 */
class FlinkRestTest {
  private final List<String> requests = new CopyOnWriteArrayList<>();
  private final ObjectMapper json = new ObjectMapper();
  private HttpServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
  }

  @Test
  void savepointWithStop_postsStopWithoutDrain_andPollsItsTrigger() throws Exception {
    String base = start();
    String location = new FlinkRest(base).savepoint("job1", "/tmp/sp", true);
    assertThat(location).isEqualTo("file:/tmp/sp/savepoint-1");
    assertThat(requests.get(0)).startsWith("POST /jobs/job1/stop ");
    JsonNode body = json.readTree(requests.get(0).substring(requests.get(0).indexOf(' ', 5) + 1));
    assertThat(body.path("drain").asBoolean(true)).isFalse();
    assertThat(body.path("targetDirectory").asText()).isEqualTo("/tmp/sp");
    assertThat(requests.get(1)).isEqualTo("GET /jobs/job1/savepoints/t-1 ");
  }

  @Test
  void savepointWithoutStop_keepsTheJobRunning() throws Exception {
    String base = start();
    new FlinkRest(base).savepoint("job1", null, false);
    assertThat(requests.get(0)).startsWith("POST /jobs/job1/savepoints ");
    JsonNode body = json.readTree(requests.get(0).substring(requests.get(0).indexOf(' ', 5) + 1));
    assertThat(body.path("cancel-job").asBoolean(true)).isFalse();
  }

  private String start() throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          String body =
              new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          requests.add(
              exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath() + " " + body);
          String answer =
              exchange.getRequestMethod().equals("POST")
                  ? "{\"request-id\":\"t-1\"}"
                  : "{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"location\":\"file:/tmp/sp/savepoint-1\"}}";
          byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    server.start();
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }
}
