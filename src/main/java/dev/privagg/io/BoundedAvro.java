package dev.privagg.io;

import org.apache.avro.Schema;

/**
 * Walks an Avro binary datum against its writer schema without allocating, and checks that Avro's
 * own decoder can read it at a cost bounded by its size: every string and bytes length, and every
 * array and map block count, fits the bytes that remain (so no declared size can ask for more
 * memory than the record brings), a block's declared byte size is what its items take, union and
 * enum indexes are in range, varints are well-formed, strings are valid UTF-8 (Avro would replace
 * invalid bytes, so two different byte strings could read as one id), and the datum ends exactly at
 * the end of the record.
 */
final class BoundedAvro {
  /** Why the bytes are not a bounded datum of the schema. */
  static final class Malformed extends Exception {
    Malformed(String message) {
      super(message, null, false, false);
    }
  }

  private final byte[] bytes;
  private final int end;
  private int pos;

  /**
   * Items every collection of the datum may still declare. An item of a type that takes bytes owns
   * at least one byte of the datum, so a well-formed datum never has more items than bytes; items
   * of a type that takes none (null, an empty record) would otherwise let each block declare as
   * many items as bytes remain, a cost quadratic in the record's size.
   */
  private long itemBudget;

  private BoundedAvro(byte[] bytes, int from, long maxItems) {
    this.bytes = bytes;
    this.end = bytes.length;
    this.pos = from;
    this.itemBudget = Math.min(end - from, maxItems);
  }

  /**
   * Checks that {@code bytes} from {@code from} to the end are exactly one datum of {@code schema}
   * whose collections declare at most {@code maxItems} items in all.
   */
  static void check(Schema schema, byte[] bytes, int from, long maxItems) throws Malformed {
    BoundedAvro walker = new BoundedAvro(bytes, from, maxItems);
    walker.datum(schema, schema.getName());
    if (walker.pos != walker.end) {
      throw new Malformed((walker.end - walker.pos) + " bytes follow the end of the record");
    }
  }

  private void datum(Schema schema, String field) throws Malformed {
    switch (schema.getType()) {
      case NULL -> {}
      case BOOLEAN -> {
        int b = take(1, field);
        if (bytes[b] != 0 && bytes[b] != 1) {
          throw new Malformed(field + " is not a boolean");
        }
      }
      case INT -> readInt(field);
      case LONG -> readLong(field);
      case FLOAT -> take(4, field);
      case DOUBLE -> take(8, field);
      case FIXED -> take(schema.getFixedSize(), field);
      case BYTES -> take(length(field), field);
      case STRING -> {
        int length = length(field);
        if (!Utf8.isValid(bytes, pos, length)) {
          throw new Malformed(field + " is not valid UTF-8");
        }
        pos += length;
      }
      case ENUM -> {
        int index = readInt(field);
        if (index < 0 || index >= schema.getEnumSymbols().size()) {
          throw new Malformed(field + " enum index " + index + " is out of range");
        }
      }
      case UNION -> {
        int index = readInt(field);
        if (index < 0 || index >= schema.getTypes().size()) {
          throw new Malformed(field + " union index " + index + " is out of range");
        }
        datum(schema.getTypes().get(index), field);
      }
      case RECORD -> {
        for (Schema.Field f : schema.getFields()) {
          datum(f.schema(), field + "." + f.name());
        }
      }
      case ARRAY -> blocks(schema.getElementType(), null, field);
      case MAP -> blocks(schema.getValueType(), Schema.create(Schema.Type.STRING), field);
    }
  }

  /**
   * Array or map blocks. A count is checked against the bytes left before its items are walked:
   * Avro's reader sizes its collection by the count, so a count above the record's size would
   * allocate more than the record brings, even for items that take no bytes.
   */
  private void blocks(Schema items, Schema keys, String field) throws Malformed {
    for (long count = readLong(field); count != 0; count = readLong(field)) {
      long blockEnd = -1;
      if (count < 0) {
        if (count == Long.MIN_VALUE) {
          throw new Malformed(field + " block count is invalid");
        }
        count = -count;
        long size = readLong(field);
        if (size < 0 || size > end - pos) {
          throw new Malformed(
              field + " block declares " + size + " bytes, " + (end - pos) + " remain");
        }
        blockEnd = pos + size;
      }
      if (count > end - pos) {
        throw new Malformed(
            field
                + " block declares "
                + count
                + " items, more than the "
                + (end - pos)
                + " bytes left");
      }
      if (count > itemBudget) {
        throw new Malformed(
            field + " declares more items in all than the record has bytes or any job accepts");
      }
      itemBudget -= count;
      for (long i = 0; i < count; i++) {
        if (keys != null) {
          datum(keys, field + " key");
        }
        datum(items, field + "[]");
      }
      if (blockEnd >= 0 && pos != blockEnd) {
        throw new Malformed(field + " block's declared size differs from what its items take");
      }
    }
  }

  private int length(String field) throws Malformed {
    long length = readLong(field);
    if (length < 0 || length > end - pos) {
      throw new Malformed(field + " declares " + length + " bytes, " + (end - pos) + " remain");
    }
    return (int) length;
  }

  private int take(int n, String field) throws Malformed {
    if (n > end - pos) {
      throw new Malformed(field + " is cut off");
    }
    int at = pos;
    pos += n;
    return at;
  }

  private long readLong(String field) throws Malformed {
    long raw = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) {
        throw new Malformed(field + " is cut off");
      }
      int b = bytes[pos++] & 0xFF;
      if (shift == 63 && b > 1) {
        break;
      }
      raw |= (long) (b & 0x7F) << shift;
      if (b < 0x80) {
        return (raw >>> 1) ^ -(raw & 1);
      }
    }
    throw new Malformed(field + " is not a valid Avro long");
  }

  private int readInt(String field) throws Malformed {
    int start = pos;
    long value = readLong(field);
    if (pos - start > 5 || value != (int) value) {
      throw new Malformed(field + " is not a valid Avro int");
    }
    return (int) value;
  }
}
