package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.spec.JobSpec;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Topics the job relies on are checked at start: an existing topic with a setting a client or a
 * restart could exploit is refused with the fix, and the topics the job creates refuse a compressed
 * record far above their limit.
 */
class TopicChecksIT extends KafkaFlinkTestBase {
  private static final String BODY =
      """
      model:
        tensors:
          - {name: w, shape: [3]}
      rounds: {timeout: 5s, expectedClients: 2}
      privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}
      """;

  @Test
  void existingTopicsWithExploitableSettings_areRefused_namingEachSettingAndItsFix()
      throws Exception {
    JobSpec spec = spec(BODY);
    try (Admin admin = admin()) {
      admin
          .createTopics(
              List.of(
                  // As a client's first write would auto-create it: CreateTime, compression
                  // allowed.
                  new NewTopic(spec.topics().updates(), 2, (short) 1),
                  new NewTopic(spec.topics().ledger(), 1, (short) 1)
                      .configs(Map.of("cleanup.policy", "compact", "retention.bytes", "1024")),
                  new NewTopic(spec.topics().rejects(), 1, (short) 1)
                      .configs(Map.of("max.message.bytes", "1000"))))
          .all()
          .get();
    }
    assertThatThrownBy(() -> KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("refusing to start on misconfigured topics")
        .hasMessageContaining(
            "topic " + spec.topics().updates() + " has message.timestamp.type=CreateTime")
        .hasMessageContaining("compression.type=producer (inherited), needs uncompressed")
        .hasMessageContaining("topic " + spec.topics().ledger() + " has cleanup.policy=compact")
        .hasMessageContaining("retention.bytes=1024, needs -1")
        .hasMessageContaining("retention.ms=604800000 (inherited), needs -1")
        .hasMessageContaining("topic " + spec.topics().rejects() + " has max.message.bytes=1000")
        .hasMessageContaining("--add-config message.timestamp.type=LogAppendTime");
  }

  @Test
  void aCompactedOrSmallSecureTopic_isRefused_andACreatedOneFitsAFullRoster() throws Exception {
    String secureBody =
        BODY.replace(
                "rounds: {timeout: 5s, expectedClients: 2}",
                "rounds: {timeout: 8s, expectedClients: 2, maxClients: 1000,"
                    + " minimumCohort: {count: 5, noiseStd: 0.1}}")
            + "aggregation: {mode: secure}\n";
    JobSpec spec = spec(secureBody);
    String secureTopic = spec.topics().secure();
    try (Admin admin = admin()) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(secureTopic, 1, (short) 1)
                      .configs(Map.of("cleanup.policy", "compact", "max.message.bytes", "1000"))))
          .all()
          .get();
    }
    assertThatThrownBy(() -> KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("topic " + secureTopic + " has cleanup.policy=compact")
        .hasMessageContaining("topic " + secureTopic + " has max.message.bytes=1000");

    JobSpec fresh = spec(secureBody);
    KafkaPreflight.ensureTopics(kafka.connection(), List.of(fresh), 2);
    try (Admin admin = admin()) {
      var resource =
          new org.apache.kafka.common.config.ConfigResource(
              org.apache.kafka.common.config.ConfigResource.Type.TOPIC, fresh.topics().secure());
      var config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
      assertThat(Long.parseLong(config.get("max.message.bytes").value()))
          .isGreaterThanOrEqualTo(fresh.maxSecureRecordBytes());
      assertThat(config.get("cleanup.policy").value()).isEqualTo("delete");
    }
  }

  @Test
  void createdUpdatesTopic_refusesACompressedRecordFarAboveItsLimit() throws Exception {
    JobSpec spec = spec(BODY);
    KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2);
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 64 << 20);
    props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 128L << 20);
    byte[] zeros = new byte[(int) (16 * spec.maxRecordBytes())]; // compresses to a few KB
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      assertThatThrownBy(
              () -> producer.send(new ProducerRecord<>(spec.topics().updates(), zeros)).get())
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(RecordTooLargeException.class);
    }
    assertThat(KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2))
        .isEmpty(); // still accepted
  }

  private static Admin admin() {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return Admin.create(props);
  }
}
