package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.GlobalModel;
import dev.privagg.cli.Main;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaAccess;
import dev.privagg.io.KafkaConnection;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job and its clients on a broker that authenticates (SASL PLAIN) and authorizes (KRaft's
 * StandardAuthorizer) every request, with exactly the ACLs the "Kafka security" table of
 * docs/operations.md prescribes: the job and the clients work; a client cannot read the updates,
 * rejects or ledger topics; unauthenticated connections, wrong passwords and missing ACLs end
 * commands with one line.
 */
class SecuredKafkaIT {
  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  private static SecuredBroker broker;
  private static JobSpec spec;
  private static String prefix;

  @TempDir static Path dir;

  @BeforeAll
  static void startBrokerAndGrant() throws Exception {
    broker = SecuredBroker.start();
    prefix = "sec-" + UUID.randomUUID().toString().substring(0, 8) + ".";
    spec = JobSpecReader.parse("secured", SecuredBroker.exactSpec(prefix));
    JobSpec.Topics t = spec.topics();
    broker.allowJob("job", prefix, true);
    // A client: send updates, follow rounds and models. Nothing else.
    broker.allow(
        "client", ResourceType.TOPIC, t.updates(), PatternType.LITERAL, AclOperation.WRITE);
    broker.allow("client", ResourceType.TOPIC, t.rounds(), PatternType.LITERAL, AclOperation.READ);
    broker.allow("client", ResourceType.TOPIC, t.models(), PatternType.LITERAL, AclOperation.READ);
    Files.writeString(dir.resolve("spec.yaml"), SecuredBroker.exactSpec(prefix));
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  void jobAndClientsWork_withThePrescribedAclsOnly_andAClientReadsNothingPrivate()
      throws Exception {
    KafkaConnection job = broker.as("job");
    KafkaPreflight.prepareKafka(job, List.of(spec), 2);
    JobClient flinkJob =
        PrivaggJob.start(
            StreamExecutionEnvironment.getExecutionEnvironment(),
            List.of(spec),
            new PrivaggJob.Settings(job, 300, 1, System.currentTimeMillis()));
    try (PrivaggClient client = new PrivaggClient(spec, broker.as("client"))) {
      // The first round with time left to send in (round 1 opens while the job deploys).
      long round = 1;
      while (client.awaitRound(round, Duration.ofSeconds(90)).getDeadlineMillis()
          < System.currentTimeMillis() + 3000) {
        round++;
      }
      float[][] sum = {new float[4]};
      for (int c = 0; c < 3; c++) {
        float[][] update = {{c, 1, -c, 0.5f}};
        client.send(round, "client-" + c, update);
        for (int i = 0; i < 4; i++) {
          sum[0][i] += update[0][i];
        }
      }
      GlobalModel model = client.awaitModel(round, Duration.ofSeconds(90));
      double[] w = PrivaggClient.weights(model)[0];
      for (int i = 0; i < 4; i++) {
        assertThat(w[i]).as("coordinate %d", i).isCloseTo(sum[0][i] / 3.0, within());
      }
    } finally {
      flinkJob.cancel().get();
    }

    JobSpec.Topics t = spec.topics();
    for (String privateTopic : List.of(t.updates(), t.rejects(), t.ledger())) {
      assertThatThrownBy(() -> readOne(broker.as("client"), privateTopic))
          .as("client reading %s", privateTopic)
          .isInstanceOf(TopicAuthorizationException.class);
    }
    assertThatThrownBy(
            () ->
                KafkaAccess.require(
                    broker.as("client"),
                    KafkaAccess.Needs.topics(Map.of(t.ledger(), Set.of(AclOperation.READ)))))
        .hasMessageContaining("refused User:client")
        .hasMessageContaining("READ")
        .hasMessageContaining(t.ledger());
  }

  private static org.assertj.core.data.Offset<Double> within() {
    return org.assertj.core.data.Offset.offset(1e-6);
  }

  private static void readOne(KafkaConnection as, String topic) {
    var props = as.clientProperties();
    props.put("isolation.level", "read_committed");
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      TopicPartition p = new TopicPartition(topic, 0);
      consumer.assign(List.of(p));
      consumer.seekToBeginning(List.of(p));
      consumer.poll(Duration.ofSeconds(10));
    }
  }

  @Test
  void aJobPrincipalLackingOnlyItsTransactionalIdAcl_isRefusedAtStart() throws Exception {
    broker.allowJob("halfjob", prefix, false);
    assertThatThrownBy(() -> KafkaPreflight.prepareKafka(broker.as("halfjob"), List.of(spec), 2))
        .isInstanceOf(IllegalStateException.class)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"))
        .hasMessageContaining("refused User:halfjob")
        .hasMessageContaining("--transactional-id privagg-");
  }

  @Test
  void aJobPrincipalWithoutAcls_isRefusedAtStart_inOneLine() {
    assertThatThrownBy(() -> KafkaPreflight.prepareKafka(broker.as("intruder"), List.of(spec), 2))
        .isInstanceOf(IllegalStateException.class)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"))
        .hasMessageContaining("refused User:intruder")
        .hasMessageContaining("kafka-acls.sh");
  }

  @Test
  void commandsEndWithOneLine_forNoAuthentication_wrongPassword_andAMissingAcl() throws Exception {
    Path plain = dir.resolve("plain.properties");
    Files.writeString(plain, "# no security.protocol: PLAINTEXT\n");
    Path wrong = properties("client", "not-the-password");
    Path intruder = properties("intruder", "intruder-secret");

    String unauthenticated = consume(plain);
    assertThat(unauthenticated).startsWith("error: no Kafka broker answered").contains("PLAINTEXT");
    String badPassword = consume(wrong);
    assertThat(badPassword)
        .startsWith(
            "error: Kafka at " + broker.bootstrapServers() + " refused to authenticate User:client")
        .doesNotContain("not-the-password");
    String noAcl = consume(intruder);
    assertThat(noAcl)
        .startsWith("error: Kafka at " + broker.bootstrapServers() + " refused User:intruder")
        .contains("--operation Read --topic " + spec.topics().rounds());
    for (String line : List.of(unauthenticated, badPassword, noAcl)) {
      assertThat(line.strip()).doesNotContain("\n").doesNotContain("secret");
    }
  }

  private static Path properties(String user, String password) throws Exception {
    Path file = dir.resolve(user + "-" + password + ".properties");
    Files.writeString(
        file,
        """
        security.protocol=SASL_PLAINTEXT
        sasl.mechanism=PLAIN
        sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
          username="%s" password="%s";
        """
            .formatted(user, password));
    return file;
  }

  /** {@code privagg consume} with {@code properties}; returns what it printed on stderr. */
  private static String consume(Path properties) {
    StringWriter err = new StringWriter();
    List<String> args =
        new ArrayList<>(
            List.of(
                "consume",
                "--spec",
                dir.resolve("spec.yaml").toString(),
                "--bootstrap-servers",
                broker.bootstrapServers(),
                "--kafka-properties",
                properties.toString(),
                "--timeout-seconds",
                "5"));
    int code =
        Main.execute(
            args.toArray(new String[0]), new PrintWriter(new StringWriter()), new PrintWriter(err));
    assertThat(code).as("exit code; stderr: %s", err).isEqualTo(1);
    return err.toString();
  }
}
