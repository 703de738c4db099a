package dev.privagg.io;

import dev.privagg.avro.RejectReason;
import dev.privagg.avro.SecureMessage;
import java.io.IOException;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificDatumReader;

/**
 * Reads a client's SecureMessage (docs/secure-aggregation.md) from its single-object encoding.
 * {@link BoundedAvro} checks the datum first, so no declared length or count makes Avro allocate
 * more than the record brings; the caller checks what each field holds.
 */
public final class SecureMessageReader {
  private static final int HEADER_BYTES = 10;

  /**
   * Fewer bytes than the smallest item any valid message holds: a RevealedShare of index 0 takes 34
   * (a one-byte index, a one-byte length and 32 bytes of share), an EncryptedShare 95. Avro's
   * reader makes an object, a ByteBuffer and an array of every item, about 170 bytes of heap for an
   * item of two bytes, so a record of the job's size full of empty items would cost a hundred times
   * its size before any check could refuse it.
   */
  static final int MIN_ITEM_BYTES = 33;

  /**
   * Items allowed beyond that: a receipt's rejected indices take a byte or more each. A receipt
   * names at most its neighbourhood (a few thousand at the largest rates), and 65,536 boxed ints
   * are about 2 MB of heap whatever the record's size.
   */
  static final int SMALL_ITEMS = 65_536;

  private static final long FINGERPRINT =
      SchemaNormalization.parsingFingerprint64(SecureMessage.getClassSchema());
  private static final SpecificDatumReader<SecureMessage> READER =
      new SpecificDatumReader<>(SecureMessage.class);

  private SecureMessageReader() {}

  /** Whether {@code bytes} carry the single-object header of the SecureMessage schema. */
  public static boolean isSecureMessage(byte[] bytes) {
    if (bytes == null || bytes.length < HEADER_BYTES || bytes[0] != (byte) 0xC3 || bytes[1] != 1) {
      return false;
    }
    long fingerprint = 0;
    for (int i = 0; i < 8; i++) {
      fingerprint |= (bytes[2 + i] & 0xFFL) << (8 * i);
    }
    return fingerprint == FINGERPRINT;
  }

  /**
   * The message {@code bytes} hold (see {@link #isSecureMessage}).
   *
   * @throws UpdateReader.Rejected UNDECODABLE when the body is not one bounded SecureMessage datum
   */
  public static SecureMessage read(byte[] bytes) throws UpdateReader.Rejected {
    try {
      BoundedAvro.check(
          SecureMessage.getClassSchema(),
          bytes,
          HEADER_BYTES,
          bytes.length / MIN_ITEM_BYTES + SMALL_ITEMS);
    } catch (BoundedAvro.Malformed e) {
      throw new UpdateReader.Rejected(
          RejectReason.UNDECODABLE, "SecureMessage: " + e.getMessage(), null, null, null);
    }
    try {
      BinaryDecoder decoder =
          DecoderFactory.get()
              .binaryDecoder(bytes, HEADER_BYTES, bytes.length - HEADER_BYTES, null);
      return READER.read(null, decoder);
    } catch (IOException | RuntimeException e) {
      throw new UpdateReader.Rejected(
          RejectReason.UNDECODABLE, "SecureMessage: " + e, null, null, null);
    }
  }
}
