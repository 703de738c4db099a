package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What privagg prints of a connection (toString, the principal in every error line) never shows a
 * part of a password, however the JAAS line quotes it (Kafka's JAAS parser takes ' and " quotes).
 */
class KafkaConnectionSecretsTest {
  private static KafkaConnection sasl(String jaas) {
    return KafkaConnection.with(
        "b:9093",
        Map.of(
            "security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN", "sasl.jaas.config", jaas),
        "test");
  }

  @Test
  void aPasswordThatContainsUsernameEquals_isNotTakenForThePrincipal() {
    KafkaConnection c =
        sasl(
            "org.apache.kafka.common.security.plain.PlainLoginModule required"
                + " password='pw username=\"hunter2\"' username=\"alice\";");
    assertThat(c.principal()).isEqualTo("User:alice");
    assertThat(c.toString()).doesNotContain("hunter2");
  }

  @Test
  void anUnquotedOrSingleQuotedUsername_isTheUsersName() {
    assertThat(
            sasl("org.apache.kafka.common.security.plain.PlainLoginModule required username=alice password=pw;")
                .principal())
        .isEqualTo("User:alice");
    assertThat(
            sasl("org.apache.kafka.common.security.plain.PlainLoginModule required username='alice' password='pw';")
                .principal())
        .isEqualTo("User:alice");
  }

  @Test
  void anUnparsableJaasLine_givesNoName_andNoFailure() {
    assertThat(
            sasl("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\"")
                .principal())
        .isEqualTo("the SASL principal of PLAIN");
  }
}
