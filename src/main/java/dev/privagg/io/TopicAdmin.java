package dev.privagg.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Creates missing topics, with message size limits large enough for the model; counts partitions.
 */
public final class TopicAdmin {
  private TopicAdmin() {}

  /** A topic to ensure: name, partitions and topic configs. */
  public record TopicPlan(String name, int partitions, Map<String, String> configs) {}

  /** Creates the topics that do not exist yet and returns the names it created. */
  public static List<String> ensure(String bootstrapServers, List<TopicPlan> plans)
      throws ExecutionException, InterruptedException {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    try (Admin admin = Admin.create(props)) {
      Set<String> existing = admin.listTopics().names().get();
      List<NewTopic> missing = new ArrayList<>();
      for (TopicPlan plan : plans) {
        if (!existing.contains(plan.name())) {
          missing.add(
              new NewTopic(plan.name(), plan.partitions(), (short) -1).configs(plan.configs()));
        }
      }
      if (!missing.isEmpty()) {
        admin.createTopics(missing).all().get();
      }
      return missing.stream().map(NewTopic::name).toList();
    }
  }

  /**
   * The number of partitions {@code topic} has now.
   *
   * @throws IllegalStateException if the topic does not exist or the broker does not answer
   */
  public static int partitionCount(String bootstrapServers, String topic) {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    try (Admin admin = Admin.create(props)) {
      return admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get()
          .get(topic)
          .partitions()
          .size();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        throw new IllegalStateException(
            "topic " + topic + " does not exist; privagg run and the job's main create it",
            e.getCause());
      }
      throw new IllegalStateException(
          "cannot describe topic " + topic + " at " + bootstrapServers + ": " + e.getCause(),
          e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while describing topic " + topic, e);
    }
  }
}
