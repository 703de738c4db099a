package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privagg.io.KafkaAccess;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A refusal relayed by Flink's REST API reaches the user whole (every line of its message), without
 * stack frames or Flink's wrapping exceptions, and without a secret. The bodies under {@code
 * flink-rest/} are what a Flink 2.2 session cluster from deploy/local answered (see
 * SubmitRefusalIT), unedited except where noted.
 */
class FlinkRestErrorsTest {
  static String body(String name) throws IOException {
    try (InputStream in = FlinkRestErrorsTest.class.getResourceAsStream("/flink-rest/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void misconfiguredTopics_everyLineOfTheRefusal_noFrames_noWrappers() throws Exception {
    // POST /jars/:id/run with privagg.updates pre-created as CreateTime and privagg.ledger
    // compacted: Flink answers 400 with one trace, the refusal four exceptions deep.
    String refusal = FlinkRest.refusalOf(body("run-misconfigured-topics.json"));
    assertThat(refusal.lines())
        .hasSize(7)
        .first()
        .isEqualTo("refusing to start on misconfigured topics:");
    assertThat(refusal)
        .contains(
            "\n  topic privagg.updates has message.timestamp.type=CreateTime, needs LogAppendTime"
                + " set on the topic (round membership is the broker's append time; with"
                + " CreateTime clients set it); fix: kafka-configs.sh --bootstrap-server"
                + " localhost:19392 --alter --entity-type topics --entity-name privagg.updates"
                + " --add-config message.timestamp.type=LogAppendTime\n")
        .contains(
            "\n  topic privagg.ledger has cleanup.policy=compact, needs delete set on the topic"
                + " (compaction would forget spent budget); fix: kafka-configs.sh"
                + " --bootstrap-server localhost:19392 --alter --entity-type topics --entity-name"
                + " privagg.ledger --add-config cleanup.policy=delete\n")
        .doesNotContain("\tat ", "Caused by", "Exception", "... ", "Could not execute application");
    assertThat(refusal.lines().skip(1))
        .allSatisfy(line -> assertThat(line).startsWith("  topic ").contains("; fix: "));
  }

  @Test
  void aForeignJaasParseError_isNamedByItsKind_neverQuoted() throws Exception {
    // A --kafka-properties whose JAAS line has a space in an unquoted password: Kafka's parser
    // quotes what follows the space. (This body is from a job jar whose main let Kafka's exception
    // out; the main now explains it itself, and the relay still never repeats it.)
    String refusal = FlinkRest.refusalOf(body("run-unparsable-jaas.json"));
    assertThat(body("run-unparsable-jaas.json")).contains("topsecret");
    assertThat(refusal).isEqualTo(KafkaAccess.UNPARSABLE_JAAS).doesNotContain("topsecret");
  }

  @Test
  void privaggsOwnRefusal_thatNamesTheJaasSetting_isShownAsItIs() {
    String message =
        "Kafka at b:9093 refused to authenticate User:client over SASL_PLAINTEXT (Authentication"
            + " failed: Invalid username or password); fix: the username and password in"
            + " sasl.jaas.config of --kafka-properties, and sasl.mechanism (PLAIN) must match a"
            + " user the brokers know";
    String trace =
        """
        org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.
        \tat org.apache.flink.runtime.webmonitor.handlers.JarRunHandler.lambda$handleRequest$1(JarRunHandler.java:114)
        Caused by: org.apache.flink.client.program.ProgramInvocationException: The main method caused an error: %s
        \tat org.apache.flink.client.program.PackagedProgram.callMainMethod(PackagedProgram.java:360)
        \t... 4 more
        Caused by: java.lang.IllegalStateException: %s
        \tat dev.privagg.io.KafkaAccess.explain(KafkaAccess.java:160)
        \tat dev.privagg.job.PrivaggJob.main(PrivaggJob.java:139)
        \t... 7 more
        """
            .formatted(message, message);
    assertThat(FlinkRest.refusal(trace)).isEqualTo(message);
  }

  @Test
  void flinksOwnFailures_keepTheirExceptionClass_andTheInnermostCause() throws Exception {
    assertThat(FlinkRest.refusalOf(body("run-missing-savepoint.json")))
        .isEqualTo(
            "java.io.FileNotFoundException: Cannot find checkpoint or savepoint file/directory"
                + " 'file:/tmp/nonexistent-sp' on file system 'file'.");
    assertThat(FlinkRest.refusalOf(body("cancel-unknown-job.json")))
        .isEqualTo(
            "org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job"
                + " (0123456789abcdef0123456789abcdef)");
    // A 500: ["Internal server error.", "<Exception on server side:\n...\nEnd of exception ...>"]
    assertThat(FlinkRest.refusalOf(body("run-unknown-jar.json")))
        .startsWith("org.apache.flink.runtime.rest.handler.RestHandlerException: Jar file /tmp/")
        .endsWith("/flink-web-upload/nonexistent.jar does not exist")
        .doesNotContain("\n");
    // A savepoint's failure cause comes in the status answer, not as an error answer.
    String trace =
        new ObjectMapper()
            .readTree(body("savepoint-unknown-job-status.json"))
            .path("operation")
            .path("failure-cause")
            .path("stack-trace")
            .asText();
    assertThat(FlinkRest.refusal(trace))
        .isEqualTo(
            "org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job"
                + " (0123456789abcdef0123456789abcdef)");
  }

  @Test
  void anAnswerWithoutATrace_isShownWhole() {
    assertThat(FlinkRest.refusalOf("{\"errors\": [\"Not found: /jars/x/run\"]}"))
        .isEqualTo("Not found: /jars/x/run");
    assertThat(FlinkRest.refusalOf("{\"errors\": [\"first line\\nsecond line\"]}"))
        .isEqualTo("first line\nsecond line");
    assertThat(FlinkRest.refusalOf("<html><body>502 Bad Gateway</body></html>\n"))
        .isEqualTo("<html><body>502 Bad Gateway</body></html>");
  }
}
