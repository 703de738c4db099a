package dev.privagg.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Creates missing topics with the settings the job relies on, checks those settings on topics that
 * already exist (an operator may have created them, or a client's first write auto-created one),
 * and counts partitions.
 */
public final class TopicAdmin {
  private TopicAdmin() {}

  /**
   * A topic config the job relies on: {@code value} exactly, or at least {@code value} when {@code
   * atLeast} (a number). {@code why} says what goes wrong without it.
   */
  public record Requirement(String config, String value, boolean atLeast, String why) {
    /** The config must be {@code value}. */
    public static Requirement exactly(String config, String value, String why) {
      return new Requirement(config, value, false, why);
    }

    /** The config must be a number of at least {@code value}. */
    public static Requirement atLeast(String config, long value, String why) {
      return new Requirement(config, Long.toString(value), true, why);
    }

    boolean holds(String actual) {
      if (actual == null) {
        return false;
      }
      if (!atLeast) {
        return value.equals(actual);
      }
      try {
        return Long.parseLong(actual) >= Long.parseLong(value);
      } catch (NumberFormatException e) {
        return false;
      }
    }
  }

  /** A topic to ensure: name, partitions when created, and the configs it must have. */
  public record TopicPlan(String name, int partitions, List<Requirement> requirements) {}

  /**
   * Creates the topics that do not exist yet (with their required configs), then checks every
   * topic's configs, and returns the names it created.
   *
   * @throws IllegalStateException naming each topic config that is wrong, why it matters and the
   *     command that fixes it; nothing is changed on an existing topic
   */
  public static List<String> ensure(KafkaConnection kafka, List<TopicPlan> plans)
      throws ExecutionException, InterruptedException {
    Properties props = kafka.clientProperties();
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    try (Admin admin = Admin.create(props)) {
      Set<String> existing = admin.listTopics().names().get();
      List<NewTopic> missing = new ArrayList<>();
      for (TopicPlan plan : plans) {
        if (!existing.contains(plan.name())) {
          Map<String, String> configs = new java.util.HashMap<>();
          plan.requirements().forEach(r -> configs.put(r.config(), r.value()));
          missing.add(new NewTopic(plan.name(), plan.partitions(), (short) -1).configs(configs));
        }
      }
      if (!missing.isEmpty()) {
        try {
          admin.createTopics(missing).all().get();
        } catch (ExecutionException e) {
          if (e.getCause() instanceof TopicAuthorizationException) {
            throw KafkaAccess.refusal(kafka, missing.get(0).name(), List.of(AclOperation.CREATE));
          }
          // Created meanwhile (a client's first write can auto-create it): checked below instead.
          if (!(e.getCause() instanceof TopicExistsException)) {
            throw e;
          }
        }
      }
      check(admin, kafka, plans);
      return missing.stream().map(NewTopic::name).toList();
    }
  }

  private static void check(Admin admin, KafkaConnection kafka, List<TopicPlan> plans)
      throws ExecutionException, InterruptedException {
    List<ConfigResource> resources =
        plans.stream().map(p -> new ConfigResource(ConfigResource.Type.TOPIC, p.name())).toList();
    Map<ConfigResource, Config> configs;
    try {
      configs = untilKnown(() -> admin.describeConfigs(resources).all().get(), 30_000);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof TopicAuthorizationException) {
        throw KafkaAccess.refusal(
            kafka, plans.get(0).name(), List.of(AclOperation.DESCRIBE_CONFIGS));
      }
      throw e;
    }
    List<String> problems = new ArrayList<>();
    for (TopicPlan plan : plans) {
      Config config = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, plan.name()));
      for (Requirement r : plan.requirements()) {
        ConfigEntry entry = config.get(r.config());
        String actual = entry == null ? null : entry.value();
        // Only a topic's own setting counts: an inherited broker default can change under it.
        boolean own =
            entry != null && entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG;
        if (!r.holds(actual) || !own) {
          problems.add(
              "topic %s has %s=%s%s, needs %s%s set on the topic (%s); fix: kafka-configs.sh --bootstrap-server %s --alter --entity-type topics --entity-name %s --add-config %s=%s"
                  .formatted(
                      plan.name(),
                      r.config(),
                      actual,
                      own ? "" : " (inherited)",
                      r.atLeast() ? "at least " : "",
                      r.value(),
                      r.why(),
                      kafka.bootstrapServers(),
                      plan.name(),
                      r.config(),
                      r.value()));
        }
      }
    }
    if (!problems.isEmpty()) {
      throw new IllegalStateException(
          "refusing to start on misconfigured topics:\n  " + String.join("\n  ", problems));
    }
  }

  /** What {@link #untilKnown} retries: an admin call that may fail with ExecutionException. */
  private interface AdminCall<T> {
    T get() throws ExecutionException, InterruptedException;
  }

  /**
   * Runs {@code call} again while the broker does not know the topic yet: one created a moment ago
   * may not have reached the broker that answers. Gives up after {@code timeoutMillis}.
   */
  private static <T> T untilKnown(AdminCall<T> call, long timeoutMillis)
      throws ExecutionException, InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (true) {
      try {
        return call.get();
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof UnknownTopicOrPartitionException)
            || System.currentTimeMillis() > deadline) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  /**
   * The number of partitions {@code topic} has now.
   *
   * @throws IllegalStateException if the topic does not exist or the broker does not answer
   */
  public static int partitionCount(KafkaConnection kafka, String topic) {
    Properties props = kafka.clientProperties();
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    try (Admin admin = Admin.create(props)) {
      return untilKnown(
          () ->
              admin
                  .describeTopics(List.of(topic))
                  .allTopicNames()
                  .get()
                  .get(topic)
                  .partitions()
                  .size(),
          10_000);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        throw new IllegalStateException(
            "topic " + topic + " does not exist; privagg run and the job's main create it",
            e.getCause());
      }
      throw KafkaAccess.explain(e.getCause(), kafka, "describe topic " + topic);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while describing topic " + topic, e);
    }
  }
}
