package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The updates topic switched to CreateTime while the job runs: a client record stamped 50 minutes
 * ahead on every partition must not move event time (which would close and charge every round up to
 * then at once). It is rejected CLIENT_TIMESTAMP and no round closes early.
 */
class ProducerTimestampIT extends KafkaFlinkTestBase {
  @Test
  void futureStampedRecords_afterASwitchToCreateTime_areRejected_andCloseNoRound()
      throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [3]}
            rounds: {timeout: 10s, startGrace: 0ms, expectedClients: 2}
            privacy: {clipNorm: 1.0, noiseMultiplier: 3.0, delta: 1.0e-5, budgetEpsilon: 3.0}
            """);
    startJob(spec, 1);
    awaitRound(spec, 1);
    setTimestampType(spec.topics().updates(), "CreateTime");
    long future = System.currentTimeMillis() + 50L * 60_000; // Kafka accepts up to now + 1 h
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int partition = 0; partition < 2; partition++) {
        producer
            .send(
                new ProducerRecord<>(
                    spec.topics().updates(), partition, future, null, "junk".getBytes()))
            .get();
      }
    }
    List<RejectedUpdate> rejects = rejectsUntil(spec, l -> l.size() >= 2, Duration.ofSeconds(60));
    assertThat(rejects)
        .extracting(RejectedUpdate::getReason)
        .containsOnly(RejectReason.CLIENT_TIMESTAMP);
    // Were event time moved 50 minutes ahead, the 10 s rounds would close within milliseconds.
    assertThatThrownBy(() -> ledgerUntil(spec, l -> l.size() >= 2, Duration.ofSeconds(6)))
        .as("a second ledger entry: rounds closed by the future-stamped records")
        .isInstanceOf(AssertionError.class)
        .hasMessageStartingWith("timed out reading");
  }

  private static void setTimestampType(String topic, String type) throws Exception {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(props)) {
      admin
          .incrementalAlterConfigs(
              Map.of(
                  new ConfigResource(ConfigResource.Type.TOPIC, topic),
                  List.of(
                      new AlterConfigOp(
                          new ConfigEntry("message.timestamp.type", type),
                          AlterConfigOp.OpType.SET))))
          .all()
          .get();
    }
    Thread.sleep(2_000); // the broker applies topic config changes asynchronously
  }
}
