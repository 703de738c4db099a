package dev.privagg.io;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.RoundAnnouncement;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.apache.avro.message.BadHeaderException;
import org.apache.avro.message.MissingSchemaException;

/**
 * Avro single-object encoding (marker C3 01, 8-byte CRC-64-AVRO fingerprint, binary body) for every
 * record on privagg's topics, so that any Avro library can read them.
 */
public final class AvroCodec {
  private AvroCodec() {}

  /** Why bytes could not be read as a {@link ClientUpdate}. */
  public enum DecodeFailure {
    /** Not single-object encoded, or a corrupt body. */
    UNDECODABLE,
    /** Single-object encoded, but with a schema fingerprint this job does not know. */
    UNKNOWN_SCHEMA
  }

  /** A client update that could not be decoded, with the reason and a human-readable detail. */
  public static final class UpdateDecodeException extends Exception {
    private final DecodeFailure failure;

    UpdateDecodeException(DecodeFailure failure, String detail, Throwable cause) {
      super(detail, cause);
      this.failure = failure;
    }

    /** The reason category. */
    public DecodeFailure failure() {
      return failure;
    }
  }

  /** Decodes a {@link ClientUpdate}, classifying what went wrong when it cannot. */
  public static ClientUpdate decodeUpdate(byte[] bytes) throws UpdateDecodeException {
    if (bytes == null) {
      throw new UpdateDecodeException(DecodeFailure.UNDECODABLE, "record has no value", null);
    }
    try {
      return ClientUpdate.getDecoder().decode(ByteBuffer.wrap(bytes));
    } catch (MissingSchemaException e) {
      throw new UpdateDecodeException(
          DecodeFailure.UNKNOWN_SCHEMA,
          "unknown schema fingerprint "
              + fingerprintHex(bytes)
              + "; expected ClientUpdate "
              + fingerprintHex(ClientUpdate.getClassSchema()),
          e);
    } catch (BadHeaderException e) {
      throw new UpdateDecodeException(
          DecodeFailure.UNDECODABLE,
          "not Avro single-object encoding (needs marker C3 01 and a fingerprint): "
              + e.getMessage(),
          e);
    } catch (IOException | RuntimeException e) {
      throw new UpdateDecodeException(
          DecodeFailure.UNDECODABLE, "corrupt ClientUpdate body: " + e, e);
    }
  }

  public static byte[] encode(ClientUpdate record) {
    return bytes(() -> ClientUpdate.getEncoder().encode(record));
  }

  public static byte[] encode(GlobalModel record) {
    return bytes(() -> GlobalModel.getEncoder().encode(record));
  }

  public static byte[] encode(RoundAnnouncement record) {
    return bytes(() -> RoundAnnouncement.getEncoder().encode(record));
  }

  public static byte[] encode(LedgerEntry record) {
    return bytes(() -> LedgerEntry.getEncoder().encode(record));
  }

  public static byte[] encode(RejectedUpdate record) {
    return bytes(() -> RejectedUpdate.getEncoder().encode(record));
  }

  public static GlobalModel decodeModel(byte[] bytes) {
    return read(() -> GlobalModel.getDecoder().decode(bytes));
  }

  public static RoundAnnouncement decodeAnnouncement(byte[] bytes) {
    return read(() -> RoundAnnouncement.getDecoder().decode(bytes));
  }

  public static LedgerEntry decodeLedgerEntry(byte[] bytes) {
    return read(() -> LedgerEntry.getDecoder().decode(bytes));
  }

  public static RejectedUpdate decodeReject(byte[] bytes) {
    return read(() -> RejectedUpdate.getDecoder().decode(bytes));
  }

  private interface IoSupplier<T> {
    T get() throws IOException;
  }

  private static byte[] bytes(IoSupplier<ByteBuffer> encode) {
    ByteBuffer buffer = read(encode);
    byte[] out = new byte[buffer.remaining()];
    buffer.get(out);
    return out;
  }

  private static <T> T read(IoSupplier<T> supplier) {
    try {
      return supplier.get();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String fingerprintHex(byte[] singleObject) {
    StringBuilder hex = new StringBuilder();
    for (int i = 2; i < Math.min(10, singleObject.length); i++) {
      hex.append(String.format("%02x", singleObject[i]));
    }
    return hex.toString();
  }

  private static String fingerprintHex(org.apache.avro.Schema schema) {
    long fp = org.apache.avro.SchemaNormalization.parsingFingerprint64(schema);
    StringBuilder hex = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      hex.append(String.format("%02x", (fp >>> (8 * i)) & 0xff)); // little-endian, as on the wire
    }
    return hex.toString();
  }
}
