package dev.privagg.job.kafka;

import dev.privagg.job.InternalRelease;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Reads the internal releases topic; records this version did not write are skipped. */
public final class InternalReleaseDeserializer
    implements KafkaRecordDeserializationSchema<InternalRelease> {
  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<InternalRelease> out) {
    InternalRelease release = InternalRelease.fromInternal(record);
    if (release != null) {
      out.collect(release);
    }
  }

  @Override
  public TypeInformation<InternalRelease> getProducedType() {
    return TypeInformation.of(InternalRelease.class);
  }
}
