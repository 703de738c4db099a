package dev.privagg.io;

import dev.privagg.avro.RejectReason;
import java.util.ArrayList;
import java.util.List;

/**
 * Hostile ClientUpdate records, each tiny or plain, each with the reason the job must reject it
 * with. Several once made Avro's decoder allocate what they declare and killed the task; they are
 * kept as regression inputs for the reader, the fuzz test and the job through Kafka.
 *
 * <p>Every case addresses a job with one float32 tensor {@code w} of shape [3] and the default caps
 * (client id 256 bytes, metadata 4096 bytes).
 */
public final class CraftedUpdates {
  /** One crafted record and the reason it must be rejected with. */
  public record Case(String name, byte[] bytes, RejectReason reason) {
    @Override
    public String toString() {
      return name;
    }
  }

  private CraftedUpdates() {}

  /** All cases for job {@code jobId}. */
  public static List<Case> all(String jobId) {
    List<Case> cases = new ArrayList<>();
    add(cases, "2^30 tensors", RejectReason.WRONG_TENSORS, upToTensors(jobId).varint(1L << 30));
    add(
        cases,
        "2^30-byte client id",
        RejectReason.UNDECODABLE,
        AvroBytes.clientUpdateHeader().string(jobId).varint(1).varint(1L << 30));
    add(
        cases,
        "2^28 shape entries",
        RejectReason.WRONG_TENSORS,
        upToTensors(jobId).varint(1).string("w").varint(1L << 28));
    add(
        cases,
        "2^31-byte tensor data",
        RejectReason.UNDECODABLE,
        upToTensors(jobId).varint(1).string("w").varint(1).varint(3).varint(0).varint(1L << 31));
    add(
        cases,
        "2^30-byte job id",
        RejectReason.UNDECODABLE,
        AvroBytes.clientUpdateHeader().varint(1L << 30));
    add(
        cases,
        "2^30 metadata entries",
        RejectReason.METADATA_TOO_LARGE,
        withTensor(jobId).varint(1).varint(1L << 30));
    add(
        cases,
        "2^30-byte metadata key",
        RejectReason.UNDECODABLE,
        withTensor(jobId).varint(1).varint(1).varint(1L << 30));
    add(
        cases,
        "negative client id length",
        RejectReason.UNDECODABLE,
        AvroBytes.clientUpdateHeader().string(jobId).varint(1).varint(-5));
    add(
        cases,
        "Long.MIN_VALUE tensor block count",
        RejectReason.UNDECODABLE,
        upToTensors(jobId).varint(Long.MIN_VALUE));
    add(
        cases,
        "negative tensor block count with a 2^40-byte block size",
        RejectReason.UNDECODABLE,
        upToTensors(jobId).varint(-1).varint(1L << 40));
    add(
        cases,
        "round as an 11-byte varint",
        RejectReason.UNDECODABLE,
        AvroBytes.clientUpdateHeader()
            .string(jobId)
            .raw(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01));
    add(
        cases,
        "shape entry as a 6-byte varint",
        RejectReason.UNDECODABLE,
        upToTensors(jobId).varint(1).string("w").varint(1).raw(0x86, 0x80, 0x80, 0x80, 0x80, 0x00));
    add(
        cases,
        "client id that is not UTF-8",
        RejectReason.UNDECODABLE,
        AvroBytes.clientUpdateHeader().string(jobId).varint(1).varint(2).raw(0xC3, 0x28));
    add(
        cases,
        "bytes after the record",
        RejectReason.UNDECODABLE,
        withTensor(jobId).varint(0).raw(0x00, 0x00));
    add(cases, "metadata union index 2", RejectReason.UNDECODABLE, withTensor(jobId).varint(2));
    add(
        cases,
        "client id of 1,040,000 characters",
        RejectReason.CLIENT_ID_TOO_LONG,
        tensorAndNoMetadata(
            AvroBytes.clientUpdateHeader().string(jobId).varint(1).string("c".repeat(1_040_000))));
    add(
        cases,
        "metadata of 5,000 bytes",
        RejectReason.METADATA_TOO_LARGE,
        withTensor(jobId).varint(1).varint(1).string("note").string("m".repeat(5_000)).varint(0));
    add(cases, "empty record", RejectReason.UNDECODABLE, new AvroBytes());
    add(cases, "header only", RejectReason.UNDECODABLE, AvroBytes.clientUpdateHeader());
    add(
        cases,
        "other schema fingerprint",
        RejectReason.UNKNOWN_SCHEMA,
        new AvroBytes().raw(0xC3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8).string(jobId));
    return List.copyOf(cases);
  }

  /** A valid update of job {@code jobId} for round 1 with tensor w = values, and no metadata. */
  public static byte[] valid(String jobId, String clientId, float... values) {
    return tensorAndNoMetadata(
            AvroBytes.clientUpdateHeader().string(jobId).varint(1).string(clientId), values)
        .toByteArray();
  }

  private static AvroBytes upToTensors(String jobId) {
    return AvroBytes.clientUpdateHeader().string(jobId).varint(1).string("crafted");
  }

  /** Header, ids and one valid tensor; the metadata field is left to the caller. */
  private static AvroBytes withTensor(String jobId) {
    return tensor(upToTensors(jobId), new float[3]);
  }

  private static AvroBytes tensorAndNoMetadata(AvroBytes upToTensors, float... values) {
    return tensor(upToTensors, values.length == 0 ? new float[3] : values).varint(0);
  }

  private static AvroBytes tensor(AvroBytes upToTensors, float[] values) {
    return upToTensors
        .varint(1)
        .string("w")
        .varint(1)
        .varint(values.length)
        .varint(0)
        .bytes(Float32.write(values, 0, values.length).array())
        .varint(0);
  }

  private static void add(List<Case> cases, String name, RejectReason reason, AvroBytes bytes) {
    cases.add(new Case(name, bytes.toByteArray(), reason));
  }
}
