package dev.privagg.io;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.Tensor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.avro.SchemaNormalization;

/**
 * Reads a {@link ClientUpdate} from its Avro single-object encoding (marker C3 01, CRC-64-AVRO
 * fingerprint, binary body) without trusting a single length the bytes declare: every length and
 * count is checked against the bytes that remain and against the job's {@link Limits} before
 * anything is allocated. Anything wrong is a {@link Rejected} with a reject reason and whatever of
 * the record's identity was read; nothing else is thrown. Tensor data is a read-only view of the
 * input, not a copy. Records of an earlier ClientUpdate schema are resolved by {@link
 * UpdateVersions} and then read here with the same caps.
 *
 * <p>Every check, and what a hostile record can cost: docs/design.md, "Hostile input".
 */
public final class UpdateReader {
  /** Job ids are at most 100 ASCII characters (the spec reader's rule): longer ones name no job. */
  public static final int MAX_JOB_ID_BYTES = 100;

  private static final byte[] MARKER = {(byte) 0xC3, 0x01};
  private static final int HEADER_BYTES = 10;
  private static final long FINGERPRINT =
      SchemaNormalization.parsingFingerprint64(ClientUpdate.getClassSchema());

  /**
   * What one job accepts; every count and length in a record is checked against these before
   * anything of that size is allocated.
   *
   * @param maxClientIdBytes longest client id, in UTF-8 bytes
   * @param maxMetadataBytes largest encoded metadata field (union index and map), in bytes
   * @param maxTensors most tensors an update may declare (the job's tensor count)
   * @param maxRank most shape entries a tensor may declare
   * @param maxTensorNameBytes longest tensor name, in UTF-8 bytes
   */
  public record Limits(
      int maxClientIdBytes,
      int maxMetadataBytes,
      int maxTensors,
      int maxRank,
      int maxTensorNameBytes)
      implements java.io.Serializable {
    /**
     * The most array and map items an accepted update has: a shape entry per rank of every tensor,
     * the tensors themselves, and a metadata entry per two bytes (each takes at least its key and
     * value lengths).
     */
    public long collectionItems() {
      return (long) maxTensors * (1 + maxRank) + maxMetadataBytes / 2 + 1;
    }

    /** Checks that every cap is non-negative (zero tensors or rank would accept nothing). */
    public Limits {
      if (maxClientIdBytes < 1 || maxMetadataBytes < 0 || maxTensors < 1 || maxRank < 1) {
        throw new IllegalArgumentException(
            "limits must be >= 1 (metadata >= 0), were "
                + List.of(maxClientIdBytes, maxMetadataBytes, maxTensors, maxRank));
      }
      if (maxTensorNameBytes < 1) {
        throw new IllegalArgumentException(
            "maxTensorNameBytes must be >= 1, was " + maxTensorNameBytes);
      }
    }
  }

  /** Why a record was not read, with the identity fields read before the problem (or null). */
  public static final class Rejected extends Exception {
    private final RejectReason reason;
    private final String jobId;
    private final Long round;
    private final String clientId;

    Rejected(RejectReason reason, String detail, String jobId, Long round, String clientId) {
      super(detail, null, false, false); // no stack trace: rejects are normal traffic
      this.reason = reason;
      this.jobId = jobId;
      this.round = round;
      this.clientId = clientId;
    }

    /** The reject reason code. */
    public RejectReason reason() {
      return reason;
    }

    /** The record's job id, if it was read. */
    public String jobId() {
      return jobId;
    }

    /** The record's round, if it was read. */
    public Long round() {
      return round;
    }

    /** The record's client id, if it was read and within its cap. */
    public String clientId() {
      return clientId;
    }
  }

  private final byte[] bytes;
  private final int end;
  private int pos;
  private long declaredBlockEnd = -1;
  private String jobId;
  private Long round;
  private String clientId;

  private UpdateReader(byte[] bytes) {
    this.bytes = bytes;
    this.end = bytes.length;
  }

  /**
   * Reads {@code bytes} as a ClientUpdate of a job whose caps {@code limitsForJob} gives; it
   * returns null for a job id that runs nowhere here (reason {@code UNKNOWN_JOB}).
   */
  public static ClientUpdate read(byte[] bytes, Function<String, Limits> limitsForJob)
      throws Rejected {
    return read(bytes, limitsForJob, UpdateVersions.RECORDED, Long.MAX_VALUE);
  }

  /**
   * As {@link #read(byte[], Function)}, where a record of an earlier schema version may declare no
   * more collection items in all than {@code maxCollectionItems} (the largest {@link
   * Limits#collectionItems} of the jobs served), so Avro never builds more items than some job
   * could take.
   */
  public static ClientUpdate read(
      byte[] bytes, Function<String, Limits> limitsForJob, long maxCollectionItems)
      throws Rejected {
    return read(bytes, limitsForJob, UpdateVersions.RECORDED, maxCollectionItems);
  }

  /**
   * Reads {@code bytes} written with the current ClientUpdate schema, or with one of {@code
   * versions}: such a record is checked, resolved and re-encoded as the current schema, then read
   * here with the same caps.
   */
  static ClientUpdate read(
      byte[] bytes,
      Function<String, Limits> limitsForJob,
      UpdateVersions versions,
      long maxCollectionItems)
      throws Rejected {
    if (bytes == null) {
      throw new Rejected(RejectReason.UNDECODABLE, "record has no value", null, null, null);
    }
    UpdateReader reader = new UpdateReader(bytes);
    long fingerprint = reader.header();
    if (fingerprint != FINGERPRINT) {
      if (!versions.knows(fingerprint)) {
        throw new Rejected(
            RejectReason.UNKNOWN_SCHEMA,
            "unknown schema fingerprint "
                + hex(fingerprint)
                + "; expected ClientUpdate "
                + hex(FINGERPRINT)
                + " or an earlier version in schemas/history/ClientUpdate",
            null,
            null,
            null);
      }
      try {
        reader =
            new UpdateReader(
                versions.upgrade(fingerprint, bytes, HEADER_BYTES, maxCollectionItems));
        reader.header();
      } catch (BoundedAvro.Malformed e) {
        throw new Rejected(
            RejectReason.UNDECODABLE,
            "ClientUpdate of schema " + hex(fingerprint) + ": " + e.getMessage(),
            null,
            null,
            null);
      }
    }
    return reader.body(limitsForJob);
  }

  /** The fingerprint of the ClientUpdate schema as it appears on the wire (little-endian hex). */
  public static String expectedFingerprintHex() {
    return hex(FINGERPRINT);
  }

  /** The record after a header of the current schema. */
  private ClientUpdate body(Function<String, Limits> limitsForJob) throws Rejected {
    jobId = string("jobId", MAX_JOB_ID_BYTES, RejectReason.UNKNOWN_JOB);
    Limits limits = limitsForJob.apply(jobId);
    if (limits == null) {
      throw reject(RejectReason.UNKNOWN_JOB, "no job '" + jobId + "' runs here");
    }
    round = readLong("round", "");
    clientId = string("clientId", limits.maxClientIdBytes(), RejectReason.CLIENT_ID_TOO_LONG);
    List<Tensor> tensors = tensors(limits);
    skipMetadata(limits.maxMetadataBytes());
    if (pos != end) {
      throw reject(
          RejectReason.UNDECODABLE,
          (end - pos) + " bytes follow the end of the ClientUpdate record");
    }
    return new ClientUpdate(jobId, round, clientId, tensors, null);
  }

  /** Checks the single-object header and returns the writer schema's fingerprint. */
  private long header() throws Rejected {
    if (end < HEADER_BYTES || bytes[0] != MARKER[0] || bytes[1] != MARKER[1]) {
      throw reject(
          RejectReason.UNDECODABLE,
          "not Avro single-object encoding (needs marker C3 01 and an 8-byte schema fingerprint)");
    }
    long fingerprint = 0;
    for (int i = 0; i < 8; i++) {
      fingerprint |= (bytes[2 + i] & 0xFFL) << (8 * i); // little-endian, as written
    }
    pos = HEADER_BYTES;
    return fingerprint;
  }

  private List<Tensor> tensors(Limits limits) throws Rejected {
    List<Tensor> tensors = new ArrayList<>();
    long declared = 0;
    for (long count = blockCount("tensors"); count > 0; count = blockCount("tensors")) {
      long blockEnd = declaredBlockEnd;
      // Compared before adding, so no declared count can overflow the tally.
      if (count > limits.maxTensors() - declared) {
        throw reject(
            RejectReason.WRONG_TENSORS,
            "declares more than " + limits.maxTensors() + " tensors, the job has that many");
      }
      declared += count;
      // Each tensor takes at least 3 bytes (three zero lengths).
      requireAtLeast(count * 3, "tensors", count + " tensors");
      for (long i = 0; i < count; i++) {
        String name =
            string("tensor name", limits.maxTensorNameBytes(), RejectReason.WRONG_TENSORS);
        List<Integer> shape = shape(name, limits.maxRank());
        int length = length("tensor '" + name + "' data", Integer.MAX_VALUE, null);
        ByteBuffer data = ByteBuffer.wrap(bytes, pos, length).slice().asReadOnlyBuffer();
        pos += length;
        tensors.add(new Tensor(name, shape, data));
      }
      checkBlockEnd(blockEnd, "tensors");
    }
    return tensors;
  }

  private List<Integer> shape(String tensor, int maxRank) throws Rejected {
    List<Integer> shape = new ArrayList<>();
    long declared = 0;
    for (long count = blockCount("shape"); count > 0; count = blockCount("shape")) {
      long blockEnd = declaredBlockEnd;
      if (count > maxRank - declared) {
        throw reject(
            RejectReason.WRONG_TENSORS,
            "tensor '" + tensor + "' declares more than " + maxRank + " dimensions");
      }
      declared += count;
      requireAtLeast(count, "shape", count + " dimensions");
      for (long i = 0; i < count; i++) {
        shape.add(readInt("tensor '" + tensor + "'", " shape"));
      }
      checkBlockEnd(blockEnd, "shape");
    }
    return shape;
  }

  /**
   * Checks the nullable metadata map in place (structure, UTF-8, encoded size with the union index
   * under the cap) and drops it: the job uses no metadata, so it builds no strings or map for it.
   */
  private void skipMetadata(int maxBytes) throws Rejected {
    int start = pos;
    int branch = readInt("metadata", " union index"); // Avro writes union indexes as ints
    if (branch == 0) {
      return;
    }
    if (branch != 1) {
      throw reject(RejectReason.UNDECODABLE, "metadata union index must be 0 or 1, was " + branch);
    }
    for (long count = blockCount("metadata"); count > 0; count = blockCount("metadata")) {
      long blockEnd = declaredBlockEnd;
      // Each entry takes at least 2 bytes (two zero lengths).
      if (count > (maxBytes - (pos - start)) / 2) {
        throw metadataTooLarge(maxBytes);
      }
      for (long i = 0; i < count; i++) {
        skipString("metadata key", maxBytes, RejectReason.METADATA_TOO_LARGE);
        skipString("metadata value", maxBytes, RejectReason.METADATA_TOO_LARGE);
        if (pos - start > maxBytes) {
          throw metadataTooLarge(maxBytes);
        }
      }
      checkBlockEnd(blockEnd, "metadata");
    }
    if (pos - start > maxBytes) {
      throw metadataTooLarge(maxBytes);
    }
  }

  private Rejected metadataTooLarge(int maxBytes) {
    return reject(
        RejectReason.METADATA_TOO_LARGE,
        "metadata exceeds the job's limit of " + maxBytes + " bytes");
  }

  /**
   * The item count of the next array or map block (0 ends the collection). A negative count is
   * followed by the block's size in bytes (Avro specification, "Complex Types Serialization"); then
   * {@link #declaredBlockEnd} says where the block must end, else it is -1. Readers that skip
   * blocks trust that size, so it must match what the items take ({@link #checkBlockEnd}).
   */
  private long blockCount(String field) throws Rejected {
    declaredBlockEnd = -1;
    long count = readLong(field, " block count");
    if (count >= 0) {
      return count;
    }
    if (count == Long.MIN_VALUE) {
      throw reject(RejectReason.UNDECODABLE, field + " block count " + count + " is invalid");
    }
    long size = readLong(field, " block size");
    if (size < 0 || size > end - pos) {
      throw reject(
          RejectReason.UNDECODABLE,
          field + " block declares " + size + " bytes, " + (end - pos) + " remain");
    }
    declaredBlockEnd = pos + size;
    return -count;
  }

  private void checkBlockEnd(long blockEnd, String field) throws Rejected {
    if (blockEnd >= 0 && pos != blockEnd) {
      throw reject(
          RejectReason.UNDECODABLE,
          field
              + " block declares "
              + (blockEnd - pos)
              + " bytes more than its items take; Avro readers that skip it would disagree");
    }
  }

  private void requireAtLeast(long needed, String field, String what) throws Rejected {
    if (needed > end - pos) {
      throw reject(
          RejectReason.UNDECODABLE,
          field + " declares " + what + ", which cannot fit the " + (end - pos) + " bytes left");
    }
  }

  /**
   * A string or bytes length, checked against the bytes left and then against {@code cap}; past the
   * cap the record is rejected with {@code capReason}.
   */
  private int length(String field, int cap, RejectReason capReason) throws Rejected {
    long length = readLong(field, " length");
    if (length < 0) {
      throw reject(RejectReason.UNDECODABLE, field + " has negative length " + length);
    }
    if (length > end - pos) {
      throw reject(
          RejectReason.UNDECODABLE,
          field + " declares " + length + " bytes, " + (end - pos) + " remain");
    }
    if (length > cap) {
      throw reject(capReason, field + " is " + length + " bytes, the limit is " + cap);
    }
    return (int) length;
  }

  private String string(String field, int cap, RejectReason capReason) throws Rejected {
    int start = skipString(field, cap, capReason);
    return new String(bytes, start, pos - start, StandardCharsets.UTF_8);
  }

  /** Checks a string's length and UTF-8 in place, moves past it, and returns where it starts. */
  private int skipString(String field, int cap, RejectReason capReason) throws Rejected {
    int length = length(field, cap, capReason);
    if (!Utf8.isValid(bytes, pos, length)) {
      throw reject(RejectReason.UNDECODABLE, field + " is not valid UTF-8");
    }
    int start = pos;
    pos += length;
    return start;
  }

  /**
   * A zig-zag varint of at most 10 bytes whose value fits 64 bits. The field's name comes in two
   * parts, joined only for an error message: the per-string path must not allocate.
   */
  private long readLong(String field, String part) throws Rejected {
    long raw = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) {
        throw reject(RejectReason.UNDECODABLE, field + part + " is cut off at byte " + pos);
      }
      int b = bytes[pos++] & 0xFF;
      if (shift == 63 && b > 1) {
        throw reject(RejectReason.UNDECODABLE, field + part + " is not a valid Avro long");
      }
      raw |= (long) (b & 0x7F) << shift;
      if (b < 0x80) {
        return (raw >>> 1) ^ -(raw & 1);
      }
    }
    throw reject(RejectReason.UNDECODABLE, field + part + " is not a valid Avro long");
  }

  /** A zig-zag varint of at most 5 bytes whose value fits 32 bits. */
  private int readInt(String field, String part) throws Rejected {
    int start = pos;
    long value = readLong(field, part);
    if (pos - start > 5 || value != (int) value) {
      throw reject(RejectReason.UNDECODABLE, field + part + " is not a valid Avro int");
    }
    return (int) value;
  }

  private Rejected reject(RejectReason reason, String detail) {
    return new Rejected(reason, detail, jobId, round, clientId);
  }

  private static String hex(long littleEndian) {
    StringBuilder hex = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      hex.append(String.format("%02x", (littleEndian >>> (8 * i)) & 0xff));
    }
    return hex.toString();
  }
}
