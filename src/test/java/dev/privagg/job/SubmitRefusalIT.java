package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.cli.CliTestAccess;
import dev.privagg.io.KafkaAccess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code privagg submit} as an operator runs it against a real Flink session cluster and broker
 * (deploy/local, on ports of their own: Kafka 19492/19493, Flink REST 18481, RPC 16523): when the
 * job's main refuses to start, the user sees the whole refusal Flink relays, every line of it,
 * without Flink's stack trace, and never a secret.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SubmitRefusalIT {
  private static final Path STATE = Path.of("target/submit-refusal").toAbsolutePath();

  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private LocalCluster cluster;

  @BeforeAll
  void startCluster() throws Exception {
    Files.createDirectories(STATE);
    cluster = new LocalCluster(STATE, 19492, 18481, 16523);
    cluster.startInParallel();
  }

  @AfterAll
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void topicsPreCreatedWrong_theRefusalReachesTheUserWhole_withEachFix() throws Exception {
    String job = "refused-" + run;
    Path spec = spec(job);
    Properties admin = new Properties();
    admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.kafka());
    try (Admin kafka = Admin.create(admin)) {
      kafka
          .createTopics(
              List.of(
                  new NewTopic(job + ".updates", 2, (short) 1)
                      .configs(Map.of("message.timestamp.type", "CreateTime")),
                  new NewTopic(job + ".ledger", 1, (short) 1)
                      .configs(Map.of("cleanup.policy", "compact"))))
          .all()
          .get();
    }

    CliTestAccess.Result submit = submit(spec);

    assertThat(submit.exitCode()).as(submit.err()).isEqualTo(1);
    assertThat(submit.out()).isEmpty();
    String fix =
        "; fix: kafka-configs.sh --bootstrap-server "
            + cluster.kafka()
            + " --alter --entity-type topics --entity-name ";
    assertThat(submit.err())
        .startsWith("error: Flink REST POST /jars/")
        .contains(
            "/run answered 400: refusing to start on misconfigured topics:\n"
                + "  topic "
                + job
                + ".updates has message.timestamp.type=CreateTime, needs LogAppendTime set on the"
                + " topic")
        .contains(fix + job + ".updates --add-config message.timestamp.type=LogAppendTime\n")
        .contains("  topic " + job + ".ledger has cleanup.policy=compact, needs delete")
        .contains(fix + job + ".ledger --add-config cleanup.policy=delete\n")
        .doesNotContain("\tat ", "Caused by", "Exception");
    assertThat(submit.err().lines().skip(1))
        .isNotEmpty()
        .allSatisfy(line -> assertThat(line).startsWith("  topic " + job).contains(fix));
  }

  @Test
  void anUnparsableJaasLine_isRefusedByItsKind_withoutRepeatingThePassword() throws Exception {
    // A space in an unquoted password: Kafka's JAAS parser quotes what follows it.
    Path properties = STATE.resolve("jaas-" + run + ".properties");
    Files.writeString(
        properties,
        """
        security.protocol=SASL_PLAINTEXT
        sasl.mechanism=PLAIN
        sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
          username="alice" password = hunter2 topsecret;
        """);

    CliTestAccess.Result submit =
        submit(spec("jaas-" + run), "--kafka-properties", properties.toString());

    assertThat(submit.exitCode()).as(submit.err()).isEqualTo(1);
    assertThat(submit.err())
        .startsWith("error: Flink REST POST /jars/")
        .contains(KafkaAccess.UNPARSABLE_JAAS)
        .doesNotContain("hunter2", "topsecret", "\tat ");
  }

  private CliTestAccess.Result submit(Path spec, String... more) {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "submit",
                "--spec",
                spec.toString(),
                "--bootstrap-servers",
                cluster.kafka(),
                "--rest",
                cluster.rest(),
                "--jar",
                Path.of("target/privagg-job.jar").toAbsolutePath().toString()));
    args.addAll(List.of(more));
    return CliTestAccess.execute(args.toArray(String[]::new));
  }

  private static Path spec(String job) throws Exception {
    return Files.writeString(
        STATE.resolve(job + ".yaml"),
        """
        jobId: %s
        model:
          tensors:
            - {name: w, shape: [3]}
        rounds: {timeout: 5s, expectedClients: 2}
        privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}
        topics:
          updates: %s.updates
          models: %s.models
          rounds: %s.rounds
          ledger: %s.ledger
          rejects: %s.rejects
        """
            .formatted(job, job, job, job, job, job));
  }
}
