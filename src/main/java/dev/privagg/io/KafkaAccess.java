package dev.privagg.io;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Checks, before any work starts, that the brokers answer, accept the credentials and allow the
 * operations a command needs on its topics, and turns Kafka's failures into one line that names the
 * brokers, the principal, what was refused and the fix, instead of a stack trace after a timeout.
 */
public final class KafkaAccess {
  /** How long a command waits for the brokers to answer before it says they are unreachable. */
  public static final Duration REACH_TIMEOUT = Duration.ofSeconds(15);

  /** What privagg says instead of a JAAS parse error, which may quote part of a password. */
  public static final String UNPARSABLE_JAAS =
      "sasl.jaas.config does not parse; check its quoting, the control flag (required) and the"
          + " trailing ';' in --kafka-properties";

  private KafkaAccess() {}

  /**
   * What a principal must be allowed: operations per topic, consumer groups it reads offsets of,
   * and transactional ids it writes with.
   */
  public record Needs(
      Map<String, Set<AclOperation>> topics, List<String> groups, List<String> transactionalIds) {
    /** Operations on topics only. */
    public static Needs topics(Map<String, Set<AclOperation>> topics) {
      return new Needs(topics, List.of(), List.of());
    }
  }

  /**
   * Returns when the brokers answer and allow every operation in {@code needs}: on topics that
   * exist (topics that do not exist yet are skipped), and Describe on the groups and transactional
   * ids (implied by the Read and Write ACLs they need; Kafka answers "not found" for a permitted
   * one that does not exist yet, and refuses an unpermitted one either way).
   *
   * @throws IllegalStateException with one line saying what failed and how to fix it
   */
  public static void require(KafkaConnection kafka, Needs needs) {
    Properties props = kafka.clientProperties();
    int millis = (int) REACH_TIMEOUT.toMillis();
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Integer.toString(millis));
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(millis));
    try (Admin admin = Admin.create(props)) {
      admin.describeCluster().clusterId().get(millis, TimeUnit.MILLISECONDS);
      for (Map.Entry<String, Set<AclOperation>> need : needs.topics().entrySet()) {
        Optional<Set<AclOperation>> allowedOn = allowedOn(admin, need.getKey(), millis);
        if (allowedOn.isEmpty()) {
          continue;
        }
        Set<AclOperation> allowed = allowedOn.get();
        List<AclOperation> missing = new ArrayList<>();
        for (AclOperation op : need.getValue()) {
          if (!allowed.contains(op) && !allowed.contains(AclOperation.ALL)) {
            missing.add(op);
          }
        }
        if (!missing.isEmpty()) {
          throw refusal(kafka, need.getKey(), missing);
        }
      }
      for (String group : needs.groups()) {
        expectAllowed(
            admin.describeConsumerGroups(List.of(group)).all(),
            millis,
            GroupIdNotFoundException.class);
      }
      if (!needs.transactionalIds().isEmpty()) {
        expectAllowed(
            admin.describeTransactions(needs.transactionalIds()).all(),
            millis,
            TransactionalIdNotFoundException.class);
      }
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException(unreachable(kafka));
    } catch (ExecutionException e) {
      throw explain(e.getCause(), kafka, "connect");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while connecting to Kafka at " + kafka);
    }
  }

  /** Waits for a describe call; "not found" counts as allowed, any other failure is thrown. */
  private static void expectAllowed(
      org.apache.kafka.common.KafkaFuture<?> call, int millis, Class<?> notFound)
      throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
    try {
      call.get(millis, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (!notFound.isInstance(e.getCause())) {
        throw e;
      }
    }
  }

  /**
   * The operations the principal may do on {@code topic}: an empty set when it may not even
   * describe it; nothing (an empty Optional) when the topic does not exist or the broker does not
   * say, since then nothing can be checked ahead.
   */
  private static Optional<Set<AclOperation>> allowedOn(Admin admin, String topic, int millis)
      throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
    try {
      TopicDescription d =
          admin
              .describeTopics(
                  List.of(topic), new DescribeTopicsOptions().includeAuthorizedOperations(true))
              .allTopicNames()
              .get(millis, TimeUnit.MILLISECONDS)
              .get(topic);
      return d.authorizedOperations() == null
          ? Optional.empty()
          : Optional.of(d.authorizedOperations());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return Optional.empty();
      }
      if (e.getCause() instanceof TopicAuthorizationException) {
        return Optional.of(Set.of());
      }
      throw e;
    }
  }

  /**
   * The one-line explanation of {@code failure} (or its first cause Kafka raised) while doing
   * {@code what}; a failure that is not Kafka's comes back as an IllegalStateException with its
   * message.
   */
  public static IllegalStateException explain(
      Throwable failure, KafkaConnection kafka, String what) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      Optional<String> line = line(t, kafka, what);
      if (line.isPresent()) {
        return new IllegalStateException(line.get());
      }
    }
    return new IllegalStateException(
        "could not " + what + " at Kafka " + kafka + ": " + innermostReason(failure));
  }

  /**
   * The innermost cause's message, which says what was wrong ("No resolvable bootstrap urls"); a
   * JAAS parse error may quote part of the line (a password), so only its kind is named.
   */
  private static String innermostReason(Throwable failure) {
    Throwable root = failure;
    boolean jaas = false;
    for (Throwable t = failure; t != null; t = t.getCause()) {
      root = t;
      jaas |= mayQuoteJaas(String.valueOf(t.getMessage()));
    }
    if (jaas) {
      return UNPARSABLE_JAAS;
    }
    return firstLine(root);
  }

  /**
   * Whether a message not written by privagg may come from parsing the JAAS line (and then quote a
   * part of it, such as a password): such a message is replaced by {@link #UNPARSABLE_JAAS}.
   */
  public static boolean mayQuoteJaas(String message) {
    String m = message.toLowerCase(java.util.Locale.ROOT);
    return m.contains("jaas") || m.contains("login module") || m.contains("value not specified");
  }

  /** Whether {@code failure} or a cause is one {@link #explain} turns into an actionable line. */
  public static boolean isKafkaFailure(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof org.apache.kafka.common.KafkaException) {
        return true;
      }
    }
    return false;
  }

  private static Optional<String> line(Throwable t, KafkaConnection kafka, String what) {
    String brokers = kafka.bootstrapServers();
    String principal = kafka.principal();
    if (t instanceof SslAuthenticationException) {
      return Optional.of(
          "TLS handshake with Kafka at %s failed (%s); fix: point ssl.truststore.location (and the keystore, if the listener wants client certificates) in --kafka-properties at the brokers' CA"
              .formatted(brokers, firstLine(t)));
    }
    if (t instanceof AuthenticationException) {
      return Optional.of(
          "Kafka at %s refused to authenticate %s over %s (%s); fix: the username and password in sasl.jaas.config of --kafka-properties, and sasl.mechanism (%s) must match a user the brokers know"
              .formatted(
                  brokers,
                  principal,
                  kafka.securityProtocol(),
                  firstLine(t),
                  kafka.settings().getOrDefault("sasl.mechanism", "GSSAPI")));
    }
    if (t instanceof TopicAuthorizationException e && e.unauthorizedTopics().isEmpty()) {
      return Optional.of(
          refused(
              kafka,
              "access to a topic to " + what,
              "that docs/operations.md, 'Kafka security', lists for this principal"));
    }
    if (t instanceof TopicAuthorizationException e) {
      return Optional.of(
          refused(
              kafka,
              "access to topic(s) " + String.join(",", e.unauthorizedTopics()) + " to " + what,
              "--operation <Read|Write|DescribeConfigs, as docs/operations.md, 'Kafka security', lists> --topic "
                  + String.join(",", e.unauthorizedTopics())));
    }
    if (t instanceof GroupAuthorizationException e) {
      return Optional.of(
          refused(
              kafka,
              "READ on consumer group " + e.groupId(),
              "--operation Read --group " + e.groupId()));
    }
    if (t instanceof TransactionalIdAuthorizationException) {
      return Optional.of(
          refused(
              kafka,
              "its transactional id (" + firstLine(t) + ")",
              "--operation Write --transactional-id privagg- --resource-pattern-type prefixed"));
    }
    if (t instanceof ClusterAuthorizationException) {
      return Optional.of(
          refused(kafka, "a cluster operation to " + what, "--operation Create --cluster"));
    }
    if (t instanceof org.apache.kafka.common.errors.TimeoutException) {
      return Optional.of(unreachable(kafka));
    }
    return Optional.empty();
  }

  /** The one-line refusal of {@code missing} operations on {@code topic}, with the ACL to add. */
  public static IllegalStateException refusal(
      KafkaConnection kafka, String topic, List<AclOperation> missing) {
    return new IllegalStateException(refusedTopic(kafka, topic, missing));
  }

  private static String refusedTopic(
      KafkaConnection kafka, String topic, List<AclOperation> missing) {
    StringBuilder fix = new StringBuilder();
    for (AclOperation op : missing) {
      fix.append(fix.isEmpty() ? "" : " ").append("--operation ").append(pascal(op));
    }
    return refused(
        kafka,
        missing.stream().map(Enum::name).toList() + " on topic " + topic,
        fix + " --topic " + topic);
  }

  /** An operation as kafka-acls.sh spells it: DescribeConfigs for DESCRIBE_CONFIGS. */
  static String pascal(AclOperation op) {
    StringBuilder s = new StringBuilder();
    for (String part : op.name().split("_")) {
      s.append(part.charAt(0)).append(part.substring(1).toLowerCase(java.util.Locale.ROOT));
    }
    return s.toString();
  }

  private static String refused(KafkaConnection kafka, String what, String aclArgs) {
    return "Kafka at %s refused %s %s: no ACL allows it; fix (as an admin): kafka-acls.sh --bootstrap-server %s --command-config ADMIN.properties --add --allow-principal %s %s"
        .formatted(
            kafka.bootstrapServers(),
            kafka.principal(),
            what,
            kafka.bootstrapServers(),
            kafka.principal().startsWith("User:") ? kafka.principal() : "User:NAME",
            aclArgs);
  }

  private static String unreachable(KafkaConnection kafka) {
    return "no Kafka broker answered at %s within %d s as %s over %s; fix: check the address (--bootstrap-servers), that the brokers are up, and that their listener expects %s (otherwise set security.protocol in --kafka-properties)"
        .formatted(
            kafka.bootstrapServers(),
            REACH_TIMEOUT.toSeconds(),
            kafka.principal(),
            kafka.securityProtocol(),
            kafka.securityProtocol());
  }

  private static String firstLine(Throwable t) {
    String m = String.valueOf(t.getMessage());
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }
}
