package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A refused start on the cluster reaches the user as privagg's own line, not a stack trace. */
class FlinkRestErrorsTest {
  @Test
  void theInnermostCause_ofTheRestApisTrace_isShown() {
    String trace =
        """
        org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.
        \tat org.apache.flink.runtime.webmonitor.handlers.JarRunHandler.lambda$handleRequest$1(JarRunHandler.java:114)
        Caused by: org.apache.flink.client.program.ProgramInvocationException: The main method caused an error: Kafka at b:9093 refused User:job [READ] on topic privagg.ledger
        \tat org.apache.flink.client.program.PackagedProgram.callMainMethod(PackagedProgram.java:373)
        Caused by: java.lang.IllegalStateException: Kafka at b:9093 refused User:job [READ] on topic privagg.ledger
        \tat dev.privagg.io.KafkaAccess.require(KafkaAccess.java:60)
        """;
    assertThat(FlinkRest.rootCause(trace))
        .contains(
            "java.lang.IllegalStateException: Kafka at b:9093 refused User:job [READ] on topic privagg.ledger");
    assertThat(FlinkRest.rootCause("no trace here")).isEmpty();
  }
}
