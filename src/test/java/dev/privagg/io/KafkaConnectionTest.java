package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KafkaConnectionTest {
  @TempDir Path dir;

  private static final String JAAS =
      "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"s3cret-pw\";";

  private Path file(String content) throws Exception {
    Path f = dir.resolve("kafka.properties");
    Files.writeString(f, content);
    return f;
  }

  @Test
  void aPropertiesFile_reachesEveryClient_withTheBrokers() throws Exception {
    KafkaConnection c =
        KafkaConnection.of(
            "b1:9093,b2:9093",
            file(
                "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config="
                    + JAAS
                    + "\nssl.truststore.location=/etc/kafka/ca.jks\n"));
    assertThat(c.clientProperties())
        .containsEntry("bootstrap.servers", "b1:9093,b2:9093")
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
        .containsEntry("sasl.jaas.config", JAAS)
        .containsEntry("ssl.truststore.location", "/etc/kafka/ca.jks");
    assertThat(c.principal()).isEqualTo("User:alice");
  }

  @Test
  void toString_andExplanations_neverShowASecret() {
    KafkaConnection c =
        KafkaConnection.with(
            "b:9093",
            Map.of(
                "security.protocol", "SASL_SSL",
                "sasl.mechanism", "SCRAM-SHA-256",
                "sasl.jaas.config", JAAS,
                "ssl.truststore.password", "trust-pw",
                "ssl.key.password", "key-pw"),
            "test");
    assertThat(c.toString())
        .isEqualTo("b:9093 (SASL_SSL, SCRAM-SHA-256, User:alice)")
        .doesNotContain("s3cret-pw");
    String auth =
        KafkaAccess.explain(
                new SaslAuthenticationException(
                    "Authentication failed: Invalid username or password"),
                c,
                "connect")
            .getMessage();
    String acl =
        KafkaAccess.explain(
                new RuntimeException(
                    new TopicAuthorizationException(java.util.Set.of("privagg.ledger"))),
                c,
                "read the ledger")
            .getMessage();
    for (String line : new String[] {auth, acl}) {
      assertThat(line).doesNotContain("s3cret-pw", "trust-pw", "key-pw", "\n");
    }
    assertThat(auth)
        .startsWith("Kafka at b:9093 refused to authenticate User:alice over SASL_SSL")
        .contains("sasl.jaas.config");
    assertThat(acl)
        .startsWith("Kafka at b:9093 refused User:alice access to topic(s) privagg.ledger")
        .contains("kafka-acls.sh --bootstrap-server b:9093")
        .contains("--allow-principal User:alice");
  }

  @Test
  void propertiesPrivaggSetsItself_areRefused_namingTheFileAndKey() throws Exception {
    Path f = file("security.protocol=SSL\nisolation.level=read_uncommitted\n");
    assertThatThrownBy(() -> KafkaConnection.of("b:9093", f))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--kafka-properties " + f)
        .hasMessageContaining("isolation.level is not a connection or security property")
        .hasMessageContaining("sasl.*, ssl.*");
    assertThatThrownBy(() -> KafkaConnection.of("b:9093", file("transactional.id=mine\n")))
        .hasMessageContaining("transactional.id");
  }

  @Test
  void bootstrapInTheFile_mustAgreeWithTheFlag() throws Exception {
    assertThat(KafkaConnection.of("b:9093", file("bootstrap.servers=b:9093\n")).clientProperties())
        .containsEntry("bootstrap.servers", "b:9093");
    assertThatThrownBy(() -> KafkaConnection.of("b:9093", file("bootstrap.servers=other:1\n")))
        .hasMessageContaining("disagrees with --bootstrap-servers b:9093");
  }

  @Test
  void aMissingFile_isNamed() {
    Path missing = dir.resolve("nope.properties");
    assertThatThrownBy(() -> KafkaConnection.of("b:9093", missing))
        .hasMessage("--kafka-properties " + missing + ": no such file");
  }

  @Test
  void plaintextByDefault_andItsPrincipalIsAnonymous() {
    KafkaConnection c = KafkaConnection.to("localhost:9092");
    assertThat(c.securityProtocol()).isEqualTo("PLAINTEXT");
    assertThat(c.principal()).isEqualTo("User:ANONYMOUS");
    assertThat(c.clientProperties()).containsOnlyKeys("bootstrap.servers");
    assertThat(
            KafkaAccess.explain(
                    new org.apache.kafka.common.errors.TimeoutException("x"), c, "connect")
                .getMessage())
        .startsWith(
            "no Kafka broker answered at localhost:9092 within 15 s as User:ANONYMOUS over PLAINTEXT");
  }
}
