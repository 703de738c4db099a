package dev.privagg.io;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.SecureMessage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;

/**
 * Writes Avro binary by hand, field by field, so tests can declare any length or count, including
 * ones no encoder would write: the raw material of crafted and fuzzed records.
 */
public final class AvroBytes {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  /** A buffer that starts with the ClientUpdate single-object header (C3 01 + fingerprint). */
  public static AvroBytes clientUpdateHeader() {
    return header(ClientUpdate.getClassSchema());
  }

  /** A buffer that starts with the SecureMessage single-object header (C3 01 + fingerprint). */
  public static AvroBytes secureMessageHeader() {
    return header(SecureMessage.getClassSchema());
  }

  private static AvroBytes header(Schema schema) {
    AvroBytes bytes = new AvroBytes();
    bytes.raw(0xC3, 0x01);
    long fp = SchemaNormalization.parsingFingerprint64(schema);
    for (int i = 0; i < 8; i++) {
      bytes.raw((int) (fp >>> (8 * i)) & 0xFF);
    }
    return bytes;
  }

  /** A zig-zag varint, as Avro writes int and long. */
  public AvroBytes varint(long value) {
    long zigzag = (value << 1) ^ (value >> 63);
    while ((zigzag & ~0x7FL) != 0) {
      out.write((int) ((zigzag & 0x7F) | 0x80));
      zigzag >>>= 7;
    }
    out.write((int) zigzag);
    return this;
  }

  /** A string: its UTF-8 length, then the bytes. */
  public AvroBytes string(String value) {
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    varint(utf8.length);
    out.write(utf8, 0, utf8.length);
    return this;
  }

  /** A bytes field: length, then the bytes. */
  public AvroBytes bytes(byte[] value) {
    varint(value.length);
    out.write(value, 0, value.length);
    return this;
  }

  /** Bytes as they are, with no length. */
  public AvroBytes raw(int... values) {
    for (int v : values) {
      out.write(v);
    }
    return this;
  }

  /** Bytes as they are, with no length. */
  public AvroBytes raw(byte[] values) {
    out.write(values, 0, values.length);
    return this;
  }

  /** What was written. */
  public byte[] toByteArray() {
    return out.toByteArray();
  }
}
