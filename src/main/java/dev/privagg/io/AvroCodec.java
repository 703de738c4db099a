package dev.privagg.io;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.SecureRound;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.apache.avro.message.BinaryMessageDecoder;

/**
 * Avro single-object encoding (marker C3 01, 8-byte CRC-64-AVRO fingerprint, binary body) for every
 * record on privagg's topics, so that any Avro library can read them. Client updates, which anyone
 * may write, are read by {@link UpdateReader} instead, which trusts no declared length.
 */
public final class AvroCodec {
  private AvroCodec() {}

  public static byte[] encode(ClientUpdate record) {
    return bytes(() -> ClientUpdate.getEncoder().encode(record));
  }

  public static byte[] encode(GlobalModel record) {
    return bytes(() -> GlobalModel.getEncoder().encode(record));
  }

  /**
   * An open round is written with RoundAnnouncement v1, as before v2 existed: clients of every
   * version read it, and a round an upgraded job announces again has the bytes an earlier version
   * made public. Only the budget-spent record, which v1 cannot say, is written with v2.
   */
  public static byte[] encode(RoundAnnouncement record) {
    return record.getBudgetSpent()
        ? bytes(() -> RoundAnnouncement.getEncoder().encode(record))
        : bytes(() -> OPEN_ROUND_ENCODER.encode(record));
  }

  /** Whether {@code bytes} are a budget-spent record (the only records of RoundAnnouncement v2). */
  public static boolean isBudgetSpent(byte[] bytes) {
    if (bytes.length < 10
        || !java.util.Arrays.equals(
            bytes, 0, 10, BUDGET_SPENT_HEADER, 0, BUDGET_SPENT_HEADER.length)) {
      return false;
    }
    try {
      return decodeAnnouncement(bytes).getBudgetSpent();
    } catch (RuntimeException e) {
      return false;
    }
  }

  public static byte[] encode(LedgerEntry record) {
    return bytes(() -> LedgerEntry.getEncoder().encode(record));
  }

  public static byte[] encode(RejectedUpdate record) {
    return bytes(() -> RejectedUpdate.getEncoder().encode(record));
  }

  public static byte[] encode(SecureRound record) {
    return bytes(() -> SecureRound.getEncoder().encode(record));
  }

  public static byte[] encode(SecureMessage record) {
    return bytes(() -> SecureMessage.getEncoder().encode(record));
  }

  /** Reads the job's secure-aggregation message (one schema version so far). */
  public static SecureRound decodeSecureRound(byte[] bytes) {
    return read(() -> SecureRound.getDecoder().decode(bytes));
  }

  /**
   * Reads a SecureMessage the job has already accepted (its decoder checked the bytes, see {@link
   * SecureMessageReader}).
   */
  public static SecureMessage decodeSecureMessage(byte[] bytes) {
    return read(() -> SecureMessage.getDecoder().decode(bytes));
  }

  /**
   * Reads a model written with the current schema or any released one ({@link SchemaHistory}): a
   * restarted job, and every client, must read the models already on the topic.
   */
  public static GlobalModel decodeModel(byte[] bytes) {
    return read(() -> MODEL_DECODER.decode(bytes));
  }

  /** Reads an announcement written with the current schema or any released one. */
  public static RoundAnnouncement decodeAnnouncement(byte[] bytes) {
    return read(() -> ANNOUNCEMENT_DECODER.decode(bytes));
  }

  /** Reads ledger entries of the current or any released schema: the ledger is kept forever. */
  public static LedgerEntry decodeLedgerEntry(byte[] bytes) {
    return read(() -> LEDGER_DECODER.decode(bytes));
  }

  /** Reads a reject written with the current schema or any released one. */
  public static RejectedUpdate decodeReject(byte[] bytes) {
    return read(() -> REJECT_DECODER.decode(bytes));
  }

  private static final org.apache.avro.message.BinaryMessageEncoder<RoundAnnouncement>
      OPEN_ROUND_ENCODER =
          new org.apache.avro.message.BinaryMessageEncoder<>(
              org.apache.avro.specific.SpecificData.get(),
              SchemaHistory.versions("RoundAnnouncement").get(0));

  // The single-object header (marker and fingerprint) of RoundAnnouncement's current schema.
  private static final byte[] BUDGET_SPENT_HEADER =
      java.util.Arrays.copyOf(encode(new RoundAnnouncement("", 0L, 0L, 0L, true)), 10);

  // Avro's message decoders keep one resolving reader per writer fingerprint once it was seen.
  private static final BinaryMessageDecoder<GlobalModel> MODEL_DECODER =
      GlobalModel.createDecoder(SchemaHistory.store("GlobalModel"));
  private static final BinaryMessageDecoder<RoundAnnouncement> ANNOUNCEMENT_DECODER =
      RoundAnnouncement.createDecoder(SchemaHistory.store("RoundAnnouncement"));
  private static final BinaryMessageDecoder<LedgerEntry> LEDGER_DECODER =
      LedgerEntry.createDecoder(SchemaHistory.store("LedgerEntry"));
  private static final BinaryMessageDecoder<RejectedUpdate> REJECT_DECODER =
      RejectedUpdate.createDecoder(SchemaHistory.store("RejectedUpdate"));

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
}
