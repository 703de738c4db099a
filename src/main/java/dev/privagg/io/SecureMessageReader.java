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
      BoundedAvro.check(SecureMessage.getClassSchema(), bytes, HEADER_BYTES, bytes.length);
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
