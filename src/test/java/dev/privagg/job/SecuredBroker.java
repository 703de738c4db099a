package dev.privagg.job;

import dev.privagg.io.KafkaConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real single-node KRaft broker whose only listeners speak SASL_PLAINTEXT with the PLAIN
 * mechanism, authorizing every request with KRaft's {@code StandardAuthorizer} (no ACL, no access).
 * Users: {@code admin} (the super user that creates ACLs), {@code job}, {@code client} and {@code
 * intruder}; each password is the name followed by {@code -secret}.
 */
final class SecuredBroker implements AutoCloseable {
  static final List<String> USERS = List.of("job", "halfjob", "client", "intruder");
  private static final String ADMIN = "admin";

  private final KafkaClusterTestKit cluster;

  private SecuredBroker(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  static SecuredBroker start() throws Exception {
    StringBuilder users = new StringBuilder();
    for (String user : concat(ADMIN, USERS)) {
      users.append(" user_").append(user).append("=\"").append(user).append("-secret\"");
    }
    // The brokers' own login (inter-broker and controller traffic) is the super user.
    String jaas =
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"%s\" password=\"%s-secret\"%s;"
            .formatted(ADMIN, ADMIN, users);
    KafkaClusterTestKit cluster =
        new KafkaClusterTestKit.Builder(
                new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(1)
                    .setNumControllerNodes(1)
                    .setBrokerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT)
                    .setBrokerListenerName(ListenerName.normalised("EXTERNAL"))
                    .setControllerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT)
                    .build())
            .setConfigProp("listener.name.external.plain.sasl.jaas.config", jaas)
            .setConfigProp("listener.name.controller.plain.sasl.jaas.config", jaas)
            .setConfigProp("super.users", "User:" + ADMIN)
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            .setDeleteOnClose(true)
            .build();
    cluster.format();
    cluster.startup();
    cluster.waitForReadyBrokers();
    return new SecuredBroker(cluster);
  }

  private static List<String> concat(String first, List<String> rest) {
    List<String> all = new ArrayList<>(List.of(first));
    all.addAll(rest);
    return all;
  }

  String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  /**
   * The spec of an exact job (no noise, infinite budget, 3 clients per 8 s round, one tensor of 4)
   * named {@code prefix + "job"} on topics named {@code prefix + "updates"} and so on, all under
   * the prefix the job's topic ACLs name.
   */
  static String exactSpec(String prefix) {
    return """
        jobId: %1$sjob
        model:
          tensors:
            - {name: w, shape: [4]}
        rounds:
          timeout: 8s
          expectedClients: 3
        privacy:
          clipNorm: 10
          noiseMultiplier: 0
          delta: 1.0e-5
          budgetEpsilon: .inf
        topics:
          updates: %1$supdates
          models: %1$smodels
          rounds: %1$srounds
          ledger: %1$sledger
          rejects: %1$srejects
        """
        .formatted(prefix);
  }

  /** A connection as {@code user} with {@code password}. */
  KafkaConnection as(String user, String password) {
    return KafkaConnection.with(
        bootstrapServers(),
        Map.of(
            "security.protocol", "SASL_PLAINTEXT",
            "sasl.mechanism", "PLAIN",
            "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"%s\" password=\"%s\";"
                    .formatted(user, password)),
        "test");
  }

  /** A connection as {@code user} with the right password. */
  KafkaConnection as(String user) {
    return as(user, user + "-secret");
  }

  /** Creates ACLs as the super user: allow {@code user} each operation on the resource. */
  void allow(String user, ResourceType type, String name, PatternType pattern, AclOperation... ops)
      throws Exception {
    List<AclBinding> bindings = new ArrayList<>();
    for (AclOperation op : ops) {
      bindings.add(
          new AclBinding(
              new ResourcePattern(type, name, pattern),
              new AccessControlEntry("User:" + user, "*", op, AclPermissionType.ALLOW)));
    }
    try (Admin admin = Admin.create(as(ADMIN).clientProperties())) {
      admin.createAcls(bindings).all().get();
    }
  }

  /**
   * The job's ACLs from the "Kafka security" table of docs/operations.md: Create, Read, Write and
   * DescribeConfigs on topics prefixed {@code topicPrefix}, Read on groups prefixed {@code
   * privagg-} and, with {@code transactionalIds}, Write on transactional ids prefixed {@code
   * privagg-}.
   */
  void allowJob(String user, String topicPrefix, boolean transactionalIds) throws Exception {
    allow(
        user,
        ResourceType.TOPIC,
        topicPrefix,
        PatternType.PREFIXED,
        AclOperation.CREATE,
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.DESCRIBE_CONFIGS);
    allow(user, ResourceType.GROUP, "privagg-", PatternType.PREFIXED, AclOperation.READ);
    if (transactionalIds) {
      allow(
          user,
          ResourceType.TRANSACTIONAL_ID,
          "privagg-",
          PatternType.PREFIXED,
          AclOperation.WRITE);
    }
  }

  @Override
  public void close() throws Exception {
    cluster.close();
  }
}
