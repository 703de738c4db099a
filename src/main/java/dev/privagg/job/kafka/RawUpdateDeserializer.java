package dev.privagg.job.kafka;

import dev.privagg.job.RawUpdate;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.record.TimestampType;

/** Keeps each record's position so rejects can point back to it. */
public final class RawUpdateDeserializer implements KafkaRecordDeserializationSchema<RawUpdate> {
  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<RawUpdate> out) {
    RawUpdate raw =
        new RawUpdate(record.topic(), record.partition(), record.offset(), record.value());
    raw.tick = Heartbeat.isTick(record.key(), record.value());
    raw.producerTime = record.timestampType() != TimestampType.LOG_APPEND_TIME;
    out.collect(raw);
  }

  @Override
  public TypeInformation<RawUpdate> getProducedType() {
    return TypeInformation.of(RawUpdate.class);
  }
}
