package dev.privagg.job;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * A release as the internal releases topic holds it: the exact public bytes, keyed by {@code
 * publicTopic/jobId} (so compaction keeps each job's latest model and latest announcement apart),
 * with the round and the writing run in headers.
 */
public class InternalRelease {
  static final String ROUND_HEADER = "privagg.round";
  static final String RUN_HEADER = "privagg.run";
  public static final String OPENED_HEADER = "privagg.opened";
  public static final String DEPLOYMENT_HEADER = "privagg.deployment";

  /**
   * On announcements of versions whose windows follow a fixed schedule (early close never moves
   * them); earlier versions' announcements lack it.
   */
  public static final String SCHEDULE_HEADER = "privagg.schedule";

  public static final String FIXED_SCHEDULE = "fixed";

  public String publicTopic;
  public String jobId;
  public byte[] value;
  public long round;
  public String run;

  public InternalRelease() {}

  /** The internal record for {@code release} (a model or announcement bound for its topic). */
  public static ProducerRecord<byte[], byte[]> toInternal(
      String releasesTopic, OutboundRecord release, PublicRounds.Run run) {
    String jobId = new String(release.key, StandardCharsets.UTF_8);
    List<Header> headers = new ArrayList<>();
    headers.add(new RecordHeader(ROUND_HEADER, ascii(release.round)));
    headers.add(new RecordHeader(RUN_HEADER, run.encode().getBytes(StandardCharsets.UTF_8)));
    if (release.openedMillis >= 0) {
      headers.add(new RecordHeader(OPENED_HEADER, ascii(release.openedMillis)));
    }
    if (release.fixedSchedule) {
      headers.add(
          new RecordHeader(SCHEDULE_HEADER, FIXED_SCHEDULE.getBytes(StandardCharsets.UTF_8)));
    }
    if (release.deployment != null) {
      headers.add(
          new RecordHeader(DEPLOYMENT_HEADER, release.deployment.getBytes(StandardCharsets.UTF_8)));
    }
    byte[] key = (release.topic + "/" + jobId).getBytes(StandardCharsets.UTF_8);
    return new ProducerRecord<>(releasesTopic, null, key, release.value, headers);
  }

  /**
   * Reads an internal record back; null for one this version did not write (no key, no slash, or
   * missing headers), which the publisher skips.
   */
  public static InternalRelease fromInternal(ConsumerRecord<byte[], byte[]> record) {
    if (record.key() == null || record.value() == null) {
      return null;
    }
    String key = new String(record.key(), StandardCharsets.UTF_8);
    int slash = key.indexOf('/');
    Header round = record.headers().lastHeader(ROUND_HEADER);
    Header run = record.headers().lastHeader(RUN_HEADER);
    if (slash <= 0 || round == null || run == null) {
      return null;
    }
    InternalRelease release = new InternalRelease();
    release.publicTopic = key.substring(0, slash);
    release.jobId = key.substring(slash + 1);
    release.value = record.value();
    try {
      release.round = Long.parseLong(new String(round.value(), StandardCharsets.UTF_8));
    } catch (NumberFormatException e) {
      return null;
    }
    release.run = new String(run.value(), StandardCharsets.UTF_8);
    return PublicRounds.Run.parse(release.run) == null ? null : release;
  }

  private static byte[] ascii(long value) {
    return Long.toString(value).getBytes(StandardCharsets.UTF_8);
  }

  /** A header's decimal value, or -1 when it is missing or malformed. */
  public static long longHeader(ConsumerRecord<byte[], byte[]> record, String name) {
    Header header = record.headers().lastHeader(name);
    try {
      return header == null
          ? -1
          : Long.parseLong(new String(header.value(), StandardCharsets.UTF_8));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** A header's text, or null when it is missing. */
  public static String textHeader(ConsumerRecord<byte[], byte[]> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
  }

  /** The publisher's key: one position per public topic and job. */
  public String positionKey() {
    return publicTopic + "/" + jobId;
  }
}
