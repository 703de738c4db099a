package dev.privagg.job.kafka;

import dev.privagg.job.InternalRelease;
import dev.privagg.job.OutboundRecord;
import dev.privagg.job.PublicRounds;
import dev.privagg.spec.JobSpec;
import java.util.Set;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Each output record names its own topic; releases (records for a public topic) go to the internal
 * releases topic instead, where only their committed copies are read.
 */
public final class OutboundSerializer implements KafkaRecordSerializationSchema<OutboundRecord> {
  private final String releasesTopic;
  private final Set<String> publicTopics;
  private final PublicRounds.Run run;

  public OutboundSerializer(JobSpec.Topics topics, PublicRounds.Run run) {
    this.releasesTopic = topics.releases();
    this.publicTopics = Set.copyOf(topics.publicTopics());
    this.run = run;
  }

  @Override
  public ProducerRecord<byte[], byte[]> serialize(
      OutboundRecord element, KafkaSinkContext context, Long timestamp) {
    if (publicTopics.contains(element.topic)) {
      return InternalRelease.toInternal(releasesTopic, element, run);
    }
    return new ProducerRecord<>(element.topic, element.key, element.value);
  }
}
